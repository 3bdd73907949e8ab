"""DL202 on a 0-dim factory that an in-place operation then writes with a tensor where the
accelerator may be (``total = torch.tensor(0.0)``, then ``total += loss`` or
``total.add_(loss)``): PyTorch reads a 0-dim CPU tensor as an input of a GPU operation, never as
the output it writes, so the factory needs ``device=`` (DL201 reports the write itself)."""

from __future__ import annotations

import textwrap

from conftest import lint


def _codes(code: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint(textwrap.dedent(code)) if f.code in ("DL201", "DL202"))


_HEAD = """
    import torch
    from torch import nn

    class Pooled(nn.Module):
        def __init__(self):
            super().__init__()
            self.score = nn.Linear(4, 1)

        def forward(self, crops):
"""


def test_augmented_and_method_writes_into_a_host_zero():
    code = _HEAD + """
            total = torch.tensor(0.0)
            peak = torch.zeros(())
            for crop in crops:
                total += self.score(crop).mean()
                peak.add_(self.score(crop).max())
            return total, peak
    """
    assert _codes(code) == [(12, "DL202"), (13, "DL202"), (15, "DL201"), (16, "DL201")]


def test_host_zeros_that_are_only_read_or_take_host_values_stay_silent():
    code = _HEAD + """
            factor = torch.tensor(0.5)
            seen = torch.tensor(0)
            total = torch.zeros((), device=crops[0].device)
            for crop in crops:
                out = self.score(crop).mean() * factor
                total += out
                seen += 1
                seen += torch.tensor(len(crop))
            return total, seen
    """
    assert _codes(code) == []
