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
    assert [finding.line for finding in findings] == [5]
    assert "`__init__()` keeps it for `normalize()`" in findings[0].message


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
