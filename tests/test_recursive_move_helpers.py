"""A recursive helper that moves every tensor of a nested batch and keeps its structure
(``to_device(batch, device)``: a dict of itself over the values, a list or tuple of itself over
the items, ``batch.to(device)`` for a tensor) returns the batch with every tensor on that
device."""

from __future__ import annotations

from conftest import lint

_HELPER = (
    "import torch\n"  # 1
    "from torch import nn\n"  # 2
    "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 3
    "def to_device(obj, dev):\n"  # 4
    "    if isinstance(obj, dict):\n"  # 5
    "        return {name: to_device(item, dev) for name, item in obj.items()}\n"  # 6
    "    if isinstance(obj, (list, tuple)):\n"  # 7
    "        return [to_device(item, dev) for item in obj]\n"  # 8
    "    if torch.is_tensor(obj):\n"  # 9
    "        return obj.to(dev)\n"  # 10
    "    return obj\n"  # 11
)


def test_lengths_moved_by_a_recursive_helper_reach_pack_padded_sequence_on_the_device():
    source = _HELPER + (
        "def encode(rnn, batch):\n"  # 12
        "    batch = to_device(batch, device)\n"  # 13
        "    packed = nn.utils.rnn.pack_padded_sequence(batch['x'], batch['lengths'], batch_first=True)\n"  # 14
        "    return rnn(packed)\n"  # 15
        "encode(nn.GRU(3, 4, batch_first=True).to(device), {'x': torch.randn(2, 5, 3), 'lengths': torch.tensor([5, 3])})\n"  # 16
    )
    findings = [f for f in lint(source) if f.code == "DL201"]
    assert [f.line for f in findings] == [14]
    assert "moved there at line 10" in findings[0].message


def test_a_batch_moved_by_a_recursive_helper_is_moved_for_the_model():
    source = _HELPER + (
        "net = nn.Linear(3, 2).to(device)\n"  # 12
        "def step(batch):\n"  # 13
        "    batch = to_device(batch, device)\n"  # 14
        "    return net(batch['x']) + net(batch['y'])\n"  # 15
        "step({'x': torch.from_numpy(arr), 'y': torch.from_numpy(arr)})\n"  # 16
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_a_helper_that_converts_what_it_does_not_move_is_not_taken_for_a_mover():
    # `torch.as_tensor(obj)` in the last return: not the parameter moved or kept as it is
    source = _HELPER.replace("    return obj\n", "    return torch.as_tensor(obj)\n") + (
        "def encode(rnn, batch):\n"
        "    batch = to_device(batch, device)\n"
        "    packed = nn.utils.rnn.pack_padded_sequence(batch['x'], batch['lengths'], batch_first=True)\n"
        "    return rnn(packed)\n"
        "encode(nn.GRU(3, 4, batch_first=True).to(device), {'x': torch.randn(2, 5, 3), 'lengths': torch.tensor([5, 3])})\n"
    )
    assert [f for f in lint(source) if f.code == "DL201"] == []
