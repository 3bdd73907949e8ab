"""Modules set on an object of a plain class of the file from outside its methods reach those
methods: ``obj.net = Net()`` by the caller where ``__init__`` left ``self.net = None``, and
``instance.net = Net()`` in a loader or factory that returns ``instance`` (a classmethod
``load()``), whose caller's name then holds the object with that module."""

from __future__ import annotations

from conftest import lint

_SCORER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Scorer:\n"  # 3
    "    def __init__(self):\n"  # 4
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 5
    "        self.net = None\n"  # 6
    "    def fit(self, x):\n"  # 7
    "        self.net = nn.Linear(5, 1).to(self.device)\n"  # 8
    "        return self\n"  # 9
    "    def score(self, x):\n"  # 10
    "        return self.net(x.to(self.device))\n"  # 11
    "    @classmethod\n"  # 12
    "    def restore(cls, path):\n"  # 13
    "        weights = torch.load(path, map_location='cpu')\n"  # 14
    "        made = cls()\n"  # 15
    "        made.net = nn.Linear(5, 1)\n"  # 16
    "        made.net.load_state_dict(weights)\n"  # 17
    "        return made\n"  # 18
    "def main(path):\n"  # 19
    "    scorer = Scorer.restore(path)\n"  # 20
    "    return scorer.score(torch.randn(2, 5))\n"  # 21
)


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


def test_a_module_a_loader_sets_on_the_object_it_returns_reaches_its_methods():
    assert _dl201(_SCORER) == [("DL201", 11)]


def test_the_loader_that_moves_the_module_stays_quiet():
    assert _dl201(_SCORER.replace("        made.net = nn.Linear(5, 1)\n", "        made.net = nn.Linear(5, 1).to(made.device)\n")) == []


def test_a_module_the_caller_moves_after_loading_stays_quiet():
    code = _SCORER.replace("    scorer = Scorer.restore(path)\n", "    scorer = Scorer.restore(path)\n    scorer.net.to(scorer.device)\n")
    assert _dl201(code) == []


def test_a_module_the_caller_sets_where_init_left_none():
    code = _SCORER.replace("    scorer = Scorer.restore(path)\n", "    scorer = Scorer()\n    scorer.net = nn.Linear(5, 1)\n")
    assert _dl201(code) == [("DL201", 11)]
    moved = code.replace("    scorer.net = nn.Linear(5, 1)\n", "    scorer.net = nn.Linear(5, 1).to(scorer.device)\n")
    assert _dl201(moved) == []
