"""``[torch.tensor(ids) for ids in requests]`` where ``requests`` is what the function was handed
(not a tensor, a module or a device): each element is the program's data, as the parameter is,
and its conversion is a batch made on the host (DL203 when it reaches a moved model unmoved),
not a constant the code writes out (DL202). In a module's own methods the inputs are tensors:
that stays as it was."""

from __future__ import annotations

from conftest import line_codes

_HEAD = (
    "import torch\n"  # 1
    "from torch.nn.utils.rnn import pad_sequence\n"  # 2
    "class Scorer:\n"  # 3
    "    def __init__(self):\n"  # 4
    "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 5
    "        self.net = torch.nn.EmbeddingBag(100, 2).to(self.device)\n"  # 6
)


def test_elements_of_a_handed_list_converted_and_never_moved():
    code = _HEAD + (
        "    def score(self, requests):\n"  # 7
        "        rows = [torch.tensor(ids) for ids in requests]\n"  # 8
        "        return self.net(pad_sequence(rows, batch_first=True))\n"  # 9
    )
    assert (9, "DL203") in line_codes(code)


def test_moved_elements_and_constant_rows_stay_as_they_were():
    moved = _HEAD + (
        "    def score(self, requests):\n"  # 7
        "        rows = [torch.tensor(ids) for ids in requests]\n"  # 8
        "        return self.net(pad_sequence(rows, batch_first=True).to(self.device))\n"  # 9
    )
    assert [c for c in line_codes(moved) if c[1] in ("DL202", "DL203")] == []
    constant = _HEAD + (
        "    def score(self, n):\n"  # 7
        "        rows = [torch.tensor([1, 2, 3]) for _ in range(n)]\n"  # 8
        "        return self.net(pad_sequence(rows, batch_first=True))\n"  # 9
    )
    assert (9, "DL203") not in line_codes(constant)
