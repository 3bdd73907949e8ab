"""PyTorch lets a 0-dim CPU tensor be an *input* of an operation on GPU tensors (it is read as a
scalar), but never the *output* an in-place operation writes: ``acc += gpu_value`` or
``acc.add_(gpu_value)`` with ``acc`` a 0-dim host tensor raises "Expected all tensors to be on
the same device". The reverse, a GPU tensor written with a 0-dim host operand, is fine."""

from __future__ import annotations

from conftest import lint


def _dl201(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL201"]


_RUN = (
    "import torch\n"  # 1
    "def score(batches):\n"  # 2
    "    device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"  # 3
    "    net = torch.nn.Linear(3, 1).to(device)\n"  # 4
)


def test_augmented_assignment_into_a_host_scalar_from_the_accelerator():
    code = _RUN + (
        "    running = torch.tensor(0.0)\n"  # 5
        "    for b in batches:\n"  # 6
        "        running += net(b.to(device)).mean()\n"  # 7
        "    return running\n"
    )
    assert ("DL201", 7) in _dl201(code)


def test_in_place_method_into_a_host_scalar_and_an_element_of_a_host_vector():
    code = _RUN + (
        "    seen = torch.zeros(())\n"  # 5
        "    per_item = torch.zeros(8)\n"  # 6
        "    for b in batches:\n"  # 7
        "        out = net(b.to(device)).squeeze(1)\n"  # 8
        "        seen.add_(out.sum())\n"  # 9
        "        per_item[0] += out[0]\n"  # 10
        "    return seen, per_item\n"
    )
    found = _dl201(code)
    assert ("DL201", 9) in found and ("DL201", 10) in found


def test_host_scalars_read_into_accelerator_values_and_host_sums_stay_silent():
    code = _RUN + (
        "    factor = torch.tensor(0.5)\n"  # 5
        "    total = torch.zeros((), device=device)\n"  # 6
        "    count = torch.tensor(0)\n"  # 7
        "    for b in batches:\n"  # 8
        "        out = net(b.to(device)).sum()\n"  # 9
        "        out *= factor\n"  # 10: a GPU tensor written with a 0-dim host input
        "        total += out\n"  # 11
        "        total.add_(factor)\n"  # 12
        "        count += 1\n"  # 13: a number
        "        count += torch.tensor(b.shape[0])\n"  # 14: host into host
        "    return total, out.item() + count\n"
    )
    assert _dl201(code) == []
