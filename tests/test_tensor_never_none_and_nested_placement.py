"""Two facts a caller's host tensor needs on its way into a model:

* ``if ids is None: ids = <made here> else: ids = ids.repeat(2)`` on a tensor the caller made:
  a tensor is never None, so the branch for None does not run and the caller's tensor is what
  the rest of the method works with;
* a model that hands its input, as it came in, to a submodule of the file whose own ``forward``
  moves it (``for block in self.blocks: x = block(x, cond)`` with ``cond = cond.to(...)``
  inside) places that input itself, two modules down: a call of the model may hand it on any
  device."""

from __future__ import annotations

from conftest import lint

_SCORER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Scorer(nn.Module):\n"  # 3
    "    def __init__(self, device):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.device = device\n"  # 6
    "        self.table = nn.Embedding(4, 3)\n"  # 7
    "    def score(self, feats, ids=None):\n"  # 8
    "        feats = torch.as_tensor(feats).to(self.device)\n"  # 9
    "        if ids is None:\n"  # 10
    "            ids = torch.zeros(2, dtype=torch.long).to(self.device)\n"  # 11
    "        else:\n"  # 12
    "            ids = ids.repeat(2)\n"  # 13
    "        return self.table(ids).sum() + feats.sum()\n"  # 14
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 15
    "scorer = Scorer(dev).to(dev)\n"  # 16
    "print(scorer.score([0.5, 0.25], ids=torch.tensor([1])))\n"  # 17
)


def test_a_host_tensor_handed_where_the_method_defaults_a_none():
    findings = lint(_SCORER)
    assert [(f.code, f.line) for f in findings] == [("DL201", 14)]
    assert "its input `ids` is on the CPU" in findings[0].message


def test_a_call_that_leaves_it_out_stays_quiet():
    assert lint(_SCORER.replace(", ids=torch.tensor([1]))", ")")) == []


_STACK = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Block(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.cond = nn.Embedding(4, 6)\n"  # 6
    "        self.lin = nn.Linear(6, 6)\n"  # 7
    "    def forward(self, x, c):\n"  # 8
    "        c = c.to(self.cond.weight.device)\n"  # 9
    "        return self.lin(x) + self.cond(c)\n"  # 10
    "class Stack(nn.Module):\n"  # 11
    "    def __init__(self):\n"  # 12
    "        super().__init__()\n"  # 13
    "        self.blocks = nn.ModuleList(Block() for _ in range(2))\n"  # 14
    "    def forward(self, x, c):\n"  # 15
    "        for block in self.blocks:\n"  # 16
    "            x = block(x, c)\n"  # 17
    "        return x\n"  # 18
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 19
    "stack = Stack().to(dev)\n"  # 20
    "print(stack(torch.randn(3, 6, device=dev), torch.tensor([1, 2, 3])))\n"  # 21
)


def test_an_input_a_submodule_moves_itself_may_come_on_any_device():
    assert lint(_STACK) == []


def test_an_input_no_submodule_moves_is_reported():
    findings = lint(_STACK.replace("        c = c.to(self.cond.weight.device)\n", ""))
    assert [f.code for f in findings] == ["DL201"]
