"""Facts about tensors kept as attributes and about tensor ranks (session 12, tune11)."""

from __future__ import annotations

from conftest import lint


def codes(code: str) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.code) for finding in lint(code))


def test_a_helpers_host_tensor_kept_by_a_modules_init_is_reported_once_at_the_attribute():
    # the helper's factory is not reported again by DL202 where `forward` reads the attribute
    code = (
        "import torch\nfrom torch import nn\ndef table(n):\n    return torch.arange(n, dtype=torch.float32)\n"
        "class Positions(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.table = table(n)\n"
        "    def forward(self, hidden):\n        return hidden + self.table[: hidden.size(1)]\n"
    )
    assert codes(code) == [(8, "DL103")]


def test_a_helpers_host_tensor_made_in_forward_is_still_dl202s():
    code = (
        "import torch\nfrom torch import nn\ndef table(n):\n    return torch.arange(n, dtype=torch.float32)\n"
        "class Positions(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
        "    def forward(self, hidden):\n        return self.proj(hidden) + table(hidden.size(1))[:4]\n"
    )
    assert (4, "DL202") in codes(code)


WRAPPER = (
    "import numpy as np\nimport torch\nimport torch.nn as nn\n"
    "class Wrapper:\n    def __init__(self):\n        self.model = nn.Linear(3, 2)\n"
    "    def predict(self, image):\n        x = torch.from_numpy(image){move}\n        return self.model(x)\n"
    "def main():\n    w = Wrapper()\n    {placement}\n    w.predict(np.zeros((1, 3), dtype=np.float32))\n"
)
DEVICE = '"cuda" if torch.cuda.is_available() else "cpu"'


def test_a_module_attribute_moved_in_place_from_outside_is_moved_for_the_objects_methods():
    # DeepForest: `m.model.to("cuda")`, then `m.predict_image(...)` feeds the model a host tensor
    code = WRAPPER.format(move="", placement=f"w.model.to({DEVICE})")
    assert codes(code) == [(9, "DL203")]
    code = WRAPPER.format(move="", placement=f"w.model = w.model.to({DEVICE})")
    assert codes(code) == [(9, "DL203")]


def test_a_module_attribute_left_where_init_built_it_or_fed_moved_inputs_stays_quiet():
    assert codes(WRAPPER.format(move="", placement="pass")) == []
    code = WRAPPER.format(move=".to(next(self.model.parameters()).device)", placement=f"w.model.to({DEVICE})")
    assert codes(code) == []


def test_a_device_parameter_left_at_none_moves_nothing():
    # diffusers' schedulers: `set_timesteps(n, device=None)` stores `timesteps.to(device=device)`;
    # a test that leaves the device out compares them with its own CPU tensors
    code = (
        "import numpy as np\nimport torch\nclass Sched:\n    def set_timesteps(self, n, device=None):\n"
        "        self.timesteps = torch.from_numpy(np.arange(n)).to(device=device, dtype=torch.int64)\n"
        "def test_it():\n    s = Sched()\n    s.set_timesteps(5)\n"
        "    t = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])[0:-1]\n    return t == s.timesteps\n"
    )
    assert codes(code) == []
    moved = code.replace("s.set_timesteps(5)", "s.set_timesteps(5, device='cuda')")
    assert (9, "DL202") in codes(moved)
