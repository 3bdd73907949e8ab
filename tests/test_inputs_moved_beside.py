"""DL203: a function that moves the model's other inputs itself hands it one that came in on the
host, unmoved - reported where it last reshaped it (the move belongs there), not as DL201 at the
model call."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "class Pair(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.fc = nn.Linear(8, 1)\n"  # 6
    "    def forward(self, query, candidates):\n"  # 7
    "        return self.fc(query * candidates)\n"  # 8
    "class Scorer:\n"  # 9
    "    def __init__(self, device):\n"  # 10
    "        self.device = device\n"  # 11
    "        self.net = Pair().to(device)\n"  # 12
)


def _codes(source):
    return [(f.code, f.line) for f in lint(source) if f.code in ("DL201", "DL203")]


def test_input_left_behind_while_the_others_are_moved_is_reported_where_it_is_reshaped():
    source = _HEAD + (
        "    def score(self, query, candidates):\n"  # 13
        "        candidates = candidates.to(self.device)\n"  # 14
        "        query = query.view(1, -1)\n"  # 15
        "        query = query.expand(candidates.shape[0], -1)\n"  # 16
        "        return self.net(query, candidates)\n"  # 17
        "scorer = Scorer(torch.device('cuda'))\n"  # 18
        "print(scorer.score(torch.rand(8), torch.rand(3, 8)))\n"  # 19
    )
    assert _codes(source) == [("DL203", 16)]


def test_every_input_moved_is_silent():
    source = _HEAD + (
        "    def score(self, query, candidates):\n"  # 13
        "        candidates = candidates.to(self.device)\n"  # 14
        "        query = query.view(1, -1).to(self.device)\n"  # 15
        "        return self.net(query, candidates)\n"  # 16
        "scorer = Scorer(torch.device('cuda'))\n"  # 17
        "print(scorer.score(torch.rand(8), torch.rand(3, 8)))\n"  # 18
    )
    assert _codes(source) == []


def test_without_moves_of_its_own_the_call_stays_dl201s():
    source = _HEAD + (
        "    def score(self, query, candidates):\n"  # 13
        "        return self.net(query, candidates)\n"  # 14
        "scorer = Scorer(torch.device('cuda'))\n"  # 15
        "print(scorer.score(torch.rand(8), torch.rand(3, 8)))\n"  # 16
    )
    assert _codes(source) == [("DL201", 14)]
