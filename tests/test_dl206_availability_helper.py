"""DL206: ``forward`` making tensors with a device a helper of the file picks by whether the
machine has a GPU (``d = pick_device()``), not from its input."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch
    from torch import nn

    def pick_device():
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    def device_of(t):
        return t.device if torch.cuda.is_available() else torch.device("cpu")

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 8, batch_first=True)

        def forward(self, seq):
            where = {helper}
            h0 = torch.zeros(1, seq.shape[0], 8, device=where)
            return self.rnn(seq, h0)
"""


def _dl206(helper: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{helper}", helper))) if f.code == "DL206"]


def test_a_device_picked_by_availability_in_a_helper_is_reported_at_its_binding():
    assert _dl206("pick_device()") == [17]


def test_a_helper_that_reads_a_tensor_device_is_silent():
    assert _dl206("device_of(seq)") == []
    assert _dl206("seq.device") == []
