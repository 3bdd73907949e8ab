"""DL202 in plain (non-module) classes and dataclass objects: a constructor's tensors meet what
the object is built from or handed later; a module's constructor stays DL103's."""

from __future__ import annotations

from conftest import lint


def test_stats_a_plain_constructor_keeps_meet_a_moved_observation_in_another_method():
    code = (
        "import torch\n"
        "class Policy:\n"
        "    def __init__(self, device='cpu'):\n"
        "        self.device = device\n"
        "        self.stats = {'min': torch.zeros(5), 'max': torch.ones(5)}\n"
        "    def normalize(self, data, stats):\n"
        "        return (data - stats['min']) / (stats['max'] - stats['min'])\n"
        "    def predict(self, observation: torch.Tensor):\n"
        "        observation = observation.to(self.device)\n"
        "        return self.normalize(observation, self.stats)\n"
    )
    findings = [finding for finding in lint(code) if finding.code == "DL202"]
    # `stats['min']` reads the zeros entry, which meets the moved observation first; the analysis
    # goes on as if that were fixed (`data - stats['min']` on the observation's device), so the
    # ones entry, which meets it through the host difference `max - min`, is a second finding
    assert sorted((finding.line, finding.message.split()[0]) for finding in findings) == [
        (5, "`torch.ones`"),
        (5, "`torch.zeros`"),
    ]
    zeros = [finding for finding in findings if finding.message.startswith("`torch.zeros`")][0]
    assert "`__init__()` keeps it for `normalize()`" in zeros.message


def test_a_module_constructor_mixing_its_own_tensors_is_not_dl202():
    code = (
        "import torch\n"
        "from torch import nn\n"
        "class Policy(nn.Module):\n"
        "    def __init__(self, device='cpu'):\n"
        "        super().__init__()\n"
        "        self.offset = nn.Parameter(torch.randn(5, device=device))\n"
        "        self.shifted = self.offset.detach() + torch.zeros(5)\n"
    )
    assert "DL202" not in [finding.code for finding in lint(code)]


def test_a_legacy_constructor_gets_no_device_keyword_fix():
    code = (
        "import torch\n"
        "from torch import nn\n"
        "class Head(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        return self.proj(x) * torch.Tensor([1.0, 2.0, 3.0, 4.0])\n"
    )
    findings = [finding for finding in lint(code) if finding.code == "DL202"]
    assert [finding.line for finding in findings] == [8]
    assert "legacy constructor" in findings[0].message and findings[0].fix is None


def test_a_dataclass_rebuilt_by_the_layers_is_not_blamed_after_the_loop():
    code = (
        "import torch\n"
        "from dataclasses import dataclass\n"
        "from torch import nn\n"
        "@dataclass\n"
        "class Frame:\n"
        "    translations: torch.Tensor\n"
        "class Structure(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.update = nn.Linear(3, 3)\n"
        "    def forward(self, single):\n"
        "        frames = Frame(torch.zeros(single.size(0), 3, device=single.device))\n"
        "        for _ in range(2):\n"
        "            frames = Frame(self.update(frames.translations))\n"
        "        return frames.translations + self.update(single)\n"
    )
    assert "DL202" not in [finding.code for finding in lint(code)]


def test_a_tensor_a_helper_of_init_stores_meets_a_gpu_tensor_in_a_method_analysed_first():
    # `sample` comes first and nothing calls it; `_setup` runs only as part of `__init__`
    code = (
        "import torch\n"
        "class Sampler:\n"
        "    def __init__(self, n):\n"
        "        self.n = n\n"
        "        self._setup()\n"
        "    def sample(self):\n"
        "        return torch.ones(self.n).cuda() + self.noise\n"
        "    def _setup(self):\n"
        "        self.noise = torch.randn(self.n)\n"
    )
    findings = [finding for finding in lint(code) if finding.code == "DL202"]
    assert [finding.line for finding in findings] == [9]
    assert "`_setup()` keeps it for `sample()`" in findings[0].message


def test_a_factory_in_a_helper_only_a_module_constructor_calls_is_dl103s():
    code = (
        "import torch\n"
        "from torch import nn\n"
        "class Head(nn.Module):\n"
        "    def __init__(self, n):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(n, n)\n"
        "        self._build_buffers(n)\n"
        "    def forward(self, x):\n"
        "        return self.proj(x) + self.offsets\n"
        "    def _build_buffers(self, n):\n"
        "        self.offsets = torch.arange(n)\n"
    )
    codes = [(finding.code, finding.line) for finding in lint(code)]
    assert ("DL103", 11) in codes and "DL202" not in [code for code, _ in codes]
