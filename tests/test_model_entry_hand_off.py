"""A host tensor that a caller hands to one of the model's own methods (``ranker.rank(ids)``),
which hands it on within the model (``self._score(ids)``) to where a layer takes it: DL203
reports it once, in that entry method, at the call that hands it on - where the move belongs -
instead of DL201 at the layer deep inside."""

from __future__ import annotations

from conftest import lint

_MODEL = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "class Ranker(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 6
    "        self.items = nn.Embedding(50, 8)\n"  # 7
    "    def placed(self):\n"  # 8
    "        return self.to(self.device)\n"  # 9
    "    def _lookup(self, ids):\n"  # 10
    "        return self.items(ids[:, 0])\n"  # 11
    "    def _score(self, ids):\n"  # 12
    "        return self._lookup(ids).sum(-1)\n"  # 13
)


def test_host_input_handed_on_within_the_model_is_reported_in_the_entry_method():
    source = _MODEL + (
        "    def rank(self, ids):\n"  # 14
        "        self.eval()\n"  # 15
        "        return self._score(ids)\n"  # 16
        "ranker = Ranker().placed()\n"  # 17
        "print(ranker.rank(torch.tensor([[3, 4]])))\n"  # 18
    )
    findings = [f for f in lint(source) if f.code in ("DL201", "DL203")]
    assert [(f.code, f.line) for f in findings] == [("DL203", 16)]
    assert "`ids` comes into the model's `rank()`" in findings[0].message
    assert "`self.items`" in findings[0].message


def test_entry_method_that_moves_its_input_is_silent():
    source = _MODEL + (
        "    def rank(self, ids):\n"  # 14
        "        ids = ids.to(self.device)\n"  # 15
        "        return self._score(ids)\n"  # 16
        "ranker = Ranker().placed()\n"  # 17
        "print(ranker.rank(torch.tensor([[3, 4]])))\n"  # 18
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_input_handed_on_by_forward_stays_with_the_callers_of_the_model():
    # `forward`'s callers are held to move its inputs: a layer's meeting with them is theirs
    source = _MODEL + (
        "    def forward(self, ids):\n"  # 14
        "        return self._score(ids)\n"  # 15
        "ranker = Ranker().placed()\n"  # 16
        "print(ranker(torch.tensor([[3, 4]]).to(ranker.device)))\n"  # 17
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_tensor_made_by_a_device_less_factory_in_the_entry_method_is_not_an_input():
    # made by the model's own method, not handed in: DL202's
    source = _MODEL + (
        "    def rank_all(self, n):\n"  # 14
        "        ids = torch.arange(n).view(-1, 1)\n"  # 15
        "        return self._score(ids)\n"  # 16
        "ranker = Ranker().placed()\n"  # 17
        "print(ranker.rank_all(4))\n"  # 18
    )
    assert [f.code for f in lint(source) if f.code == "DL203"] == []


def test_tensor_of_rows_looked_up_from_what_a_helper_was_handed_is_data():
    # `torch.tensor([... for row in rows])` of the rows a function was handed: the program's
    # data, as `torch.tensor(rows)` is - the model's entry method should have moved it
    source = _MODEL + (
        "    def rank(self, ids):\n"  # 14
        "        return self._score(ids)\n"  # 15
        "class Vocab:\n"  # 16
        "    def __init__(self, words):\n"  # 17
        "        self.index = {w: i for i, w in enumerate(words)}\n"  # 18
        "    def encode(self, pairs):\n"  # 19
        "        return torch.tensor([[self.index[a], self.index[b]] for a, b in pairs])\n"  # 20
        "ranker = Ranker().placed()\n"  # 21
        "vocab = Vocab(['x', 'y'])\n"  # 22
        "print(ranker.rank(vocab.encode([('x', 'y')])))\n"  # 23
    )
    findings = [f for f in lint(source) if f.code in ("DL201", "DL202", "DL203")]
    assert [(f.code, f.line) for f in findings] == [("DL203", 15)]
    assert "created from data" in findings[0].message


def test_tensor_of_the_entries_of_a_tensor_stays_a_factory():
    # the entries of a tensor read one by one on the host: a constant-like factory (DL202's)
    source = (
        "import torch\n"  # 1
        "import torch.nn.functional as F\n"  # 2
        "class Loss(torch.nn.Module):\n"  # 3
        "    def forward(self, prediction, target):\n"  # 4
        "        remapped = torch.tensor([int(v) % 3 for v in target])\n"  # 5
        "        return F.cross_entropy(prediction, remapped)\n"  # 6
    )
    assert [f.code for f in lint(source) if f.code in ("DL202", "DL203")] == ["DL202"]


def test_plain_object_handed_to_a_model_keeps_its_host_records():
    # a module keeps a plain object of the file it is handed (a triples store): what that
    # object's `__init__` made from records stays on the host, next to the model's own tensors
    source = (
        "import torch\n"  # 1
        "from torch import nn\n"  # 2
        "class Store:\n"  # 3
        "    def __init__(self, pairs):\n"  # 4
        "        self.ids = {p: i for i, p in enumerate(sorted({a for a, _ in pairs}))}\n"  # 5
        "        self.known = torch.tensor([[self.ids[a], len(b)] for a, b in pairs])\n"  # 6
        "class Model(nn.Module):\n"  # 7
        "    def __init__(self, store):\n"  # 8
        "        super().__init__()\n"  # 9
        "        self.store = store\n"  # 10
        "        self.table = nn.Embedding(8, 2)\n"  # 11
        "    def is_known(self, a, n):\n"  # 12
        "        pair = torch.tensor([[a, n]], device=self.table.weight.device)\n"  # 13
        "        return bool((pair == self.store.known).all(dim=1).any())\n"  # 14
        "model = Model(Store([('x', 'ab'), ('y', 'c')]))\n"  # 15
        "model.to('cuda')\n"  # 16
        "print(model.is_known(0, 2))\n"  # 17
    )
    findings = [f for f in lint(source) if f.code in ("DL201", "DL202")]
    assert [(f.code, f.line) for f in findings] == [("DL201", 14)]
