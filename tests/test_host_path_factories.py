"""A host factory on one path of a merge, a tensor where the accelerator
may be on the other, meeting a GPU tensor after the merge (DL202); a GPU tensor on the left of
an arithmetic operator with a numpy array (DL204)."""

from __future__ import annotations

from conftest import line_codes

MERGED = (
    "import sys\nimport torch\n"
    "def blur(images, smooth):\n"
    "    if smooth:\n"
    "        weights = torch.full((3, 3), 1 / 9, device=images.device)\n"
    "    else:\n"
    "        weights = torch.eye(3)\n"
    "    return images @ weights\n"
    "def pick(feats, ok):\n"
    "    extra = feats * 2 if ok else torch.ones(5, 5)\n"
    "    return torch.cat([feats, extra])\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "blur(torch.rand(3, 3).to(device), len(sys.argv) > 1)\n"
    "pick(torch.rand(5, 5).to(device), len(sys.argv) > 2)\n"
)


def test_a_host_factory_on_one_branch_meets_the_placed_tensor_after_the_merge():
    assert line_codes(MERGED) == [(7, "DL202"), (10, "DL202")]


def test_a_tensor_moved_under_a_flag_and_left_on_the_host_otherwise_is_quiet():
    code = (
        "import torch\n"
        "def run(x, use_gpu):\n"
        "    scores = torch.zeros(4, 4)\n"
        "    if use_gpu:\n"
        "        scores = scores.cuda()\n"
        "        x = x.cuda()\n"
        "    return x + scores\n"
    )
    assert line_codes(code) == []


def test_a_host_factory_on_the_path_a_placement_test_selects_is_quiet():
    code = (
        "import torch\n"
        "def run(x):\n"
        "    dev = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "    x = x.to(dev)\n"
        "    if x.is_cuda:\n"
        "        w = torch.ones(4, 4, device=x.device)\n"
        "    else:\n"
        "        w = torch.ones(4, 4)\n"
        "    return x @ w\n"
        "def run2(x, on_gpu):\n"
        "    dev = torch.device('cuda' if on_gpu else 'cpu')\n"
        "    x = x.to(dev)\n"
        "    w = torch.ones(4, 4).to(dev) if on_gpu else torch.ones(4, 4)\n"
        "    return x @ w\n"
    )
    assert line_codes(code) == []


NUMPY = (
    "import numpy as np\nimport torch\n"
    "def shift(bound, n):\n"
    "    return {op}\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "shift(torch.tensor([1.0]).to(device), 3)\n"
)


def test_a_gpu_tensor_left_of_an_arithmetic_operator_with_an_array_is_reported():
    assert line_codes(NUMPY.format(op="bound * np.ones(n)")) == [(4, "DL204")]
    assert line_codes(NUMPY.format(op="bound - np.zeros(n, dtype=np.float32)")) == [(4, "DL204")]


def test_a_host_tensor_or_a_number_beside_an_array_is_quiet():
    assert line_codes(NUMPY.format(op="bound.cpu() * np.ones(n)")) == []
    assert line_codes(NUMPY.format(op="bound * float(np.ones(n).sum())")) == []
    assert line_codes(NUMPY.format(op="np.ones(n) * 2.0")) == []


BLOCKS = (
    "import torch\nfrom torch import nn\n"
    "class Mixer(nn.Module):\n"
    "    def __init__(self, dim, device='cuda'):\n"
    "        super().__init__()\n"
    "        self.device = device\n"
    "        self.proj = nn.Linear(dim, dim)\n"
    "    def forward(self, x):\n"
    "        return self.proj(x.to(self.device))\n"
    "class Stack(nn.Module):\n"
    "    def __init__(self, dim, device='cuda'):\n"
    "        super().__init__()\n"
    "        self.first = Mixer(dim, device=device)\n"
    "        self.second = {second}\n"
    "    def forward(self, x):\n"
    "        return self.second(self.first(x))\n"
)


def test_a_sibling_construction_left_at_a_hard_coded_cuda_default_is_reported():
    found = [item for item in line_codes(BLOCKS.format(second="Mixer(dim)")) if item[1] == "DL206"]
    assert (14, "DL206") in found


def test_a_sibling_construction_handed_the_device_is_not_reported_there():
    found = [item for item in line_codes(BLOCKS.format(second="Mixer(dim, device)")) if item[1] == "DL206"]
    assert (14, "DL206") not in found
    alone = BLOCKS.format(second="nn.Identity()").replace("Mixer(dim, device=device)", "Mixer(dim)")
    assert (13, "DL206") not in [item for item in line_codes(alone) if item[1] == "DL206"]


REGISTERED = (
    "import torch\nfrom torch import nn\n"
    "def add_scale(module: nn.Module, name):\n"
    "    module.register_parameter(name, nn.Parameter({made}, requires_grad=False))\n"
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
    "layer = nn.Linear(4, 4){moved}\n"
    "add_scale(layer, 'scale')\n"
)


def test_a_host_tensor_registered_into_a_module_placed_by_its_caller_is_reported():
    assert line_codes(REGISTERED.format(made="torch.ones(4)", moved=".to(device)")) == [(4, "DL202")]


def test_registering_into_an_unmoved_module_or_with_its_device_is_quiet():
    assert line_codes(REGISTERED.format(made="torch.ones(4)", moved="")) == []
    code = REGISTERED.format(made="torch.ones(4, device=next(module.parameters()).device)", moved=".to(device)")
    assert line_codes(code) == []
    own = (
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n        self.register_buffer('scale', torch.ones(4))\n"
        "    def forward(self, x):\n        return self.fc(x) * self.scale\n"
        "net = Net().to('cuda')\n"
    )
    assert line_codes(own) == []
