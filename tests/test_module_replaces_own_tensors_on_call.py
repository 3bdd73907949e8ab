"""A module whose ``forward`` (or a method of its own that ``forward`` calls, however deep)
moves its own tensors to where its input is - ``self.centers.data = self.centers.data.to(x.device)``,
``self.to(x.device)`` - goes wherever each call's inputs are: that it was built on the host and
never moved says nothing of where its weights meet a call's GPU input. A module whose methods
only cast its tensors (``.float()``, ``.type(dtype)``) stays where it was built."""

from __future__ import annotations

from conftest import lint


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


def _program(adapt_body):
    return (
        "import torch\n"  # 1
        "class Centers(torch.nn.Module):\n"  # 2
        "    def __init__(self, k, d):\n"  # 3
        "        super().__init__()\n"  # 4
        "        self.centers = torch.nn.Parameter(torch.randn(k, d))\n"  # 5
        "    def adapt(self, like):\n"  # 6
        f"        {adapt_body}\n"  # 7
        "    def scores(self, feats):\n"  # 8
        "        self.adapt(feats)\n"  # 9
        "        return feats @ self.centers.t()\n"  # 10
        "    def forward(self, feats):\n"  # 11
        "        return self.scores(feats).softmax(-1)\n"  # 12
        "def run(batches):\n"  # 13
        "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 14
        "    encoder = torch.nn.Linear(8, 4).to(device)\n"  # 15
        "    head = Centers(5, 4)\n"  # 16
        "    for x in batches:\n"  # 17
        "        feats = encoder(x.to(device))\n"  # 18
        "        print(head(feats))\n"  # 19
    )


def test_a_module_that_only_casts_its_own_tensors_stays_on_the_host():
    assert ("DL201", 19) in _dl201(_program("self.centers.data = self.centers.data.type(like.dtype)"))


def test_a_module_that_moves_its_own_tensors_where_its_input_is_stays_silent():
    for body in (
        "self.centers.data = self.centers.data.to(like.device).type(like.dtype)",
        "self.centers.data = self.centers.data.type_as(like)",
        "self.to(like.device)",
    ):
        assert _dl201(_program(body)) == [], body


def test_a_move_of_its_own_tensors_to_the_host_or_a_cast_by_to_keeps_it_there():
    for body in (
        "self.centers.data = self.centers.data.to('cpu')",
        "self.centers.data = self.centers.data.to(torch.float16)",
        "self.centers.data = self.centers.data.to(like.dtype)",
        "self.centers.data = self.centers.data.to(dtype=like.dtype)",
    ):
        assert ("DL201", 19) in _dl201(_program(body)), body
