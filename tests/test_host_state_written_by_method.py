"""A running-total module (a metric) built on the host and never moved, whose own method
accumulates its inputs in place into its tensors (``self.count += batch.sum()``,
``self.count.add_(batch.sum())``): an in-place operation writes its receiver, and PyTorch lets
a 0-dim CPU tensor join a GPU operation only as an input, never as the output, so a host total
cannot take a value computed on an accelerator, whatever its rank. Reported at the write,
beside the existing report at the call."""

from __future__ import annotations

from conftest import line_codes


def _dl201(code):
    return sorted(line for line, code_ in line_codes(code) if code_ == "DL201")


_RUN_DEVICE = "torch.device('cuda' if torch.cuda.is_available() else 'cpu')"
_COUNTER = (
    "import torch\n"  # 1
    "import torch.nn as nn\n"  # 2
    "class Tally(nn.Module):\n"  # 3
    "    def __init__(self):\n"  # 4
    "        super().__init__()\n"  # 5
    "        self.register_buffer('hits', torch.zeros(()))\n"  # 6
    "        self.register_buffer('seen', torch.zeros(()))\n"  # 7
    "    def record(self, scores, mask):\n"  # 8
    "        self.hits += scores.sum()\n"  # 9
    "        self.seen.add_(mask.sum())\n"  # 10
    "class Runner:\n"  # 11
    "    def __init__(self):\n"  # 12
    "        self.tally = Tally(){move}\n"  # 13
    "    def step(self, net, xs, dev):\n"  # 14
    "        out = net(xs.to(dev))\n"  # 15
    "        self.tally.record(out, (out > 0).float())\n"  # 16
    "if __name__ == '__main__':\n"  # 17
    "    dev = {dev}\n"  # 18
    "    net = nn.Linear(3, 1).to(dev)\n"  # 19
    "    Runner().step(net, torch.randn(5, 3), dev)\n"  # 20
)


def test_accelerator_values_written_into_a_host_modules_totals():
    # both writes (an augmented assignment and an in-place method) and the call
    assert _dl201(_COUNTER.format(move="", dev=_RUN_DEVICE)) == [9, 10, 16]


def test_moved_module_or_host_inputs_stay_silent():
    # the module moved with the run's device
    assert _dl201(_COUNTER.format(move=".to(torch.device('cuda' if torch.cuda.is_available() else 'cpu'))", dev=_RUN_DEVICE)) == []
    # everything on the host
    assert _dl201(_COUNTER.format(move="", dev="torch.device('cpu')")) == []


def test_a_method_that_reads_its_state_without_writing_it_is_reported_at_the_call_only():
    code = (
        "import torch\n"  # 1
        "import torch.nn as nn\n"  # 2
        "class Offset(nn.Module):\n"  # 3
        "    def __init__(self):\n"  # 4
        "        super().__init__()\n"  # 5
        "        self.register_buffer('base', torch.zeros(()))\n"  # 6
        "    def shift(self, scores):\n"  # 7
        "        total = scores.sum()\n"  # 8
        "        total += self.base\n"  # 9
        "        return total\n"  # 10
        "if __name__ == '__main__':\n"  # 11
        "    dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 12
        "    off = Offset()\n"  # 13
        "    print(off.shift(torch.randn(4).to(dev)))\n"  # 14
    )
    # a host 0-dim buffer joining a GPU sum as an input is fine; only the call is reported
    assert 9 not in _dl201(code)


def test_a_method_that_moves_its_inputs_to_its_state_stays_silent_inside():
    moved = _COUNTER.replace("self.hits += scores.sum()", "self.hits += scores.sum().to(self.hits.device)").replace(
        "self.seen.add_(mask.sum())", "mask = mask.to(self.seen.device)\n        self.seen.add_(mask.sum())"
    )
    assert [line for line in _dl201(moved.format(move="", dev=_RUN_DEVICE)) if line in (9, 10, 11)] == []
