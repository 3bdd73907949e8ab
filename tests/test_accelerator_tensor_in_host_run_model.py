"""A module's method puts a tensor on the accelerator itself, whatever device the model is on
(``.cuda()`` in a helper it calls, ``.to(device)`` with a module-level device chosen from CUDA),
and meets it with the model's own tensors; the program builds that model on the host and calls
it there without moving it. On any GPU machine the two meet on different devices: reported at
the operation (DL201), naming the call. A program that moves the model, a method that places
the tensor where its input is, or a file that never runs the model stay silent."""

from __future__ import annotations

from conftest import lint, line_codes


def _dl201(code):
    return sorted(line for line, code_ in line_codes(code) if code_ == "DL201")


_BLOCK = (
    "import torch\n"  # 1
    "import torch.nn as nn\n"  # 2
    "RUN_ON = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')\n"  # 3
    "def diagonal_mask(n):\n"  # 4
    "    return torch.eye(n){place}\n"  # 5
    "class Attend(nn.Module):\n"  # 6
    "    def __init__(self, width):\n"  # 7
    "        super().__init__()\n"  # 8
    "        self.score = nn.Linear(width, width)\n"  # 9
    "    def forward(self, feats):\n"  # 10
    "        logits = self.score(feats).view(-1, feats.shape[-1])\n"  # 11
    "        pad = torch.ones(logits.shape[0], 2).to(RUN_ON)\n"  # 12
    "        wide = torch.cat([logits, pad], dim=1)\n"  # 13
    "        return wide[:, :-2] - diagonal_mask(logits.shape[1])\n"  # 14
    "class Stack(nn.Module):\n"  # 15
    "    def __init__(self):\n"  # 16
    "        super().__init__()\n"  # 17
    "        self.inner = Attend(6)\n"  # 18
    "    def forward(self, feats):\n"  # 19
    "        return self.inner(feats)\n"  # 20
    "def check():\n"  # 21
    "    net = Stack(){move}\n"  # 22
    "    return net(torch.rand(6, 6){move_input})\n"  # 23
)


def test_accelerator_tensors_meet_a_model_the_program_runs_on_the_host():
    # the concatenation with the module-level device, and the difference with the helper's
    # hard-coded CUDA mask, both in the held submodule's forward
    assert _dl201(_BLOCK.format(place=".cuda()", move="", move_input="")) == [13, 14]


def test_the_finding_names_the_call_of_the_model_on_the_host():
    found = [(line, message) for line, code, message in _findings(_BLOCK.format(place=".cuda()", move="", move_input="")) if code == "DL201"]
    assert found and all("never moved" in message and "line 23" in message for _, message in found)


def test_a_moved_model_or_tensors_placed_where_the_input_is_stay_silent():
    # the program moves the model (and its input) to the run's device
    assert _dl201(_BLOCK.format(place=".cuda()", move=".to(RUN_ON)", move_input=".to(RUN_ON)")) == []
    # the helper's mask made on the host, and the pad placed where the logits are
    code = _BLOCK.format(place="", move="", move_input="").replace(".to(RUN_ON)", ".to(logits.device)")
    assert _dl201(code) == []


def test_a_file_that_never_runs_the_model_stays_silent():
    library = _BLOCK.format(place=".cuda()", move="", move_input="").split("def check():")[0]
    assert _dl201(library) == []


def test_a_method_that_asks_where_its_input_is_stays_silent():
    code = (
        "import torch\n"  # 1
        "import torch.nn as nn\n"  # 2
        "class Shift(nn.Module):\n"  # 3
        "    def __init__(self):\n"  # 4
        "        super().__init__()\n"  # 5
        "        self.proj = nn.Linear(4, 4)\n"  # 6
        "    def forward(self, x):\n"  # 7
        "        y = self.proj(x).view(-1, 4)\n"  # 8
        "        offset = torch.arange(4.0)\n"  # 9
        "        if x.is_cuda:\n"  # 10
        "            offset = offset.cuda()\n"  # 11
        "        return y + offset\n"  # 12
        "model = Shift()\n"  # 13
        "out = model(torch.randn(2, 4))\n"  # 14
    )
    assert _dl201(code) == []


def test_a_helper_called_by_the_model_with_a_cuda_flag():
    code = (
        "import torch\n"  # 1
        "import torch.nn as nn\n"  # 2
        "def add_grid(pred, on_gpu):\n"  # 3
        "    grid = torch.arange(4.0).view(1, 4)\n"  # 4
        "    if on_gpu:\n"  # 5
        "        grid = grid.cuda()\n"  # 6
        "    pred[:, :4] += grid\n"  # 7
        "    return pred\n"  # 8
        "class Head(nn.Module):\n"  # 9
        "    def __init__(self):\n"  # 10
        "        super().__init__()\n"  # 11
        "        self.fc = nn.Linear(8, 8)\n"  # 12
        "    def forward(self, x, on_gpu):\n"  # 13
        "        return add_grid(self.fc(x), on_gpu)\n"  # 14
        "head = Head()\n"  # 15
        "print(head(torch.randn(3, 8), torch.cuda.is_available()))\n"  # 16
    )
    assert _dl201(code) == [7]
    # the same helper run by a model moved to the GPU when there is one: silent
    moved = code.replace("head = Head()\n", "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nhead = Head().to(dev)\n")
    moved = moved.replace("torch.randn(3, 8)", "torch.randn(3, 8, device=dev)")
    assert _dl201(moved) == []


def _findings(code):
    return [(finding.line, finding.code, finding.message) for finding in lint(code)]


def test_blocks_held_in_a_module_list_of_a_model_run_on_the_host():
    code = (
        "import torch\n"  # 1
        "import torch.nn as nn\n"  # 2
        "class Block(nn.Module):\n"  # 3
        "    def __init__(self):\n"  # 4
        "        super().__init__()\n"  # 5
        "        self.lin = nn.Linear(4, 4)\n"  # 6
        "    def forward(self, x):\n"  # 7
        "        y = self.lin(x).view(-1, 4)\n"  # 8
        "        return y * torch.rand(4).cuda()\n"  # 9
        "class Tower(nn.Module):\n"  # 10
        "    def __init__(self):\n"  # 11
        "        super().__init__()\n"  # 12
        "        self.blocks = nn.ModuleList([Block() for _ in range(3)])\n"  # 13
        "    def forward(self, x):\n"  # 14
        "        for block in self.blocks:\n"  # 15
        "            x = block(x)\n"  # 16
        "        return x\n"  # 17
        "tower = Tower()\n"  # 18
        "print(tower(torch.randn(2, 4)))\n"  # 19
    )
    assert _dl201(code) == [9]
    # the blocks moved with the tower: silent
    assert _dl201(code.replace("tower = Tower()\n", "tower = Tower().cuda()\n").replace("torch.randn(2, 4)", "torch.randn(2, 4).cuda()")) == []
