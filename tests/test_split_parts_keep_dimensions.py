"""``Tensor.split``/``chunk``/``tensor_split``/``unbind`` (and their ``torch.`` forms) return a
tuple of tensors on the receiver's device. Splitting keeps the number of dimensions, so the parts
of a 1-dim host tensor are 1-dim host tensors - not the 0-dim scalars that iterating over the
tensor itself yields, which PyTorch lets meet an accelerator tensor. A slice of a list or tuple
(``parts[:-1]``) holds the same elements. And a module's ``forward`` that moves an input through
a view of it (``t.reshape(-1, 1).to(x.device)``) places that input itself."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import torch\n"  # 1
    "def step(x, rates, gain=torch.zeros((1,))):\n"  # 2
    "    gain = gain.to(x.device)\n"  # 3
)
_MAIN = (
    "if __name__ == '__main__':\n"
    "    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
    "    rates = torch.linspace(1.0, 0.1, 6)\n"
    "    x = torch.randn(2, 3, device=device)\n"
    "    print(step(x, rates))\n"
)


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


def test_a_part_of_a_split_host_vector_meets_an_accelerator_tensor():
    code = _HEAD + (
        "    for r in rates.split(1):\n"  # 4
        "        x = x * (r + gain)\n"  # 5
        "    return x\n"
    ) + _MAIN
    assert ("DL201", 5) in _dl201(code)


def test_torch_chunk_and_neighbouring_parts_through_a_slice_and_zip():
    code = _HEAD + (
        "    parts = torch.chunk(rates, 6)\n"  # 4
        "    for a, b in zip(parts[:-1], parts[1:]):\n"  # 5
        "        x = x * (b / a + gain)\n"  # 6
        "    return x\n"
    ) + _MAIN
    assert ("DL201", 6) in _dl201(code)


def test_iterating_the_host_vector_itself_gives_scalars_and_stays_silent():
    code = _HEAD + (
        "    for r in rates:\n"  # 4
        "        x = x * (r + gain)\n"  # 5
        "    return x\n"
    ) + _MAIN
    assert _dl201(code) == []


def test_unbind_drops_a_dimension_and_stays_silent():
    code = _HEAD + (
        "    for r in rates.unbind(0):\n"  # 4
        "        x = x * (r + gain)\n"  # 5
        "    return x\n"
    ) + _MAIN
    assert _dl201(code) == []


def test_parts_of_a_moved_vector_stay_silent():
    code = _HEAD + (
        "    for r in rates.to(x.device).split(1):\n"  # 4
        "        x = x * (r + gain)\n"  # 5
        "    return x\n"
    ) + _MAIN
    assert _dl201(code) == []


_MODULE = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Scaled(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.body = nn.Linear(4, 4)\n"  # 6
    "    def forward(self, x, level):\n"  # 7
    "        return self.body(x) * level.reshape(-1, 1).float().to(x.device)\n"  # 8
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"  # 9
    "net = Scaled().to(device)\n"  # 10
    "levels = torch.linspace(0.0, 1.0, 3)\n"  # 11
    "out = net(torch.randn(3, 4, device=device), levels)\n"  # 12
)


def test_a_forward_that_moves_a_view_of_its_input_takes_it_on_any_device():
    assert _dl201(_MODULE) == []


def test_a_forward_that_does_not_move_its_input_is_still_reported():
    code = _MODULE.replace(".float().to(x.device)", ".float()")
    assert ("DL201", 12) in _dl201(code) or ("DL201", 8) in _dl201(code)


# ``sort``/``topk``/``cummax``/``cummin`` return (values, indices): both where the receiver is,
# with its dimensions


def test_sorted_values_of_a_host_vector_meet_an_accelerator_tensor():
    code = _HEAD + (
        "    ordered, order = rates.sort(descending=True)\n"  # 4
        "    return x * (ordered[:2] + gain)\n"  # 5
    ) + _MAIN
    assert ("DL201", 5) in _dl201(code)


def test_topk_values_field_of_a_host_vector_meets_an_accelerator_tensor():
    code = _HEAD + (
        "    best = torch.topk(rates, 2).values\n"  # 4
        "    return x * (best + gain)\n"  # 5
    ) + _MAIN
    assert ("DL201", 5) in _dl201(code)


def test_topk_of_a_moved_vector_and_host_indices_into_a_moved_table_stay_silent():
    code = _HEAD + (
        "    best, where = rates.to(x.device).topk(2)\n"  # 4
        "    table = torch.randn(6, 3).to(x.device)\n"  # 5
        "    _, host_where = rates.topk(2)\n"  # 6
        "    return x * (best + gain), table[host_where]\n"  # 7
    ) + _MAIN
    assert _dl201(code) == []
