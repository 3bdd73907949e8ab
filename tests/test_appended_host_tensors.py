"""DL103: a plain list attribute of a module filled by ``append`` while the module is built
holds references that ``model.to(device)`` does not move, as a list written out with its
tensors does; a registered buffer read back with ``getattr`` under its computed name is the
registered tensor, which the move replaces by a copy."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint


def findings(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), "example.py", "DL103") if f.code == "DL103")


_MODULE = """
import torch
from torch import nn

class Offsets(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.offsets = {container}
        for k in range(n):
            {fill}

    def forward(self, x):
        for offset in self.offsets:
            x = x + offset
        return x
"""


@pytest.mark.parametrize(
    "fill",
    [
        "self.offsets.append(torch.full((1, 4), float(k)))",
        "t = torch.full((1, 4), float(k))\n            self.register_buffer(f'offset_{k}', t)\n            self.offsets.append(getattr(self, f'offset_{k}'))",
    ],
)
def test_appended_host_tensors_are_flagged(fill):
    code = _MODULE.format(container="[]", fill=fill)
    line = next(i for i, text in enumerate(textwrap.dedent(code).splitlines(), 1) if "self.offsets.append" in text)
    assert findings(code) == [line]


@pytest.mark.parametrize(
    "container, fill",
    [
        # a ParameterList registers what it is given
        ("nn.ParameterList()", "self.offsets.append(torch.full((1, 4), float(k)))"),
        # a parameter keeps its identity through a move (its data is replaced in place)
        ("[]", "self.offsets.append(nn.Parameter(torch.full((1, 4), float(k))))"),
        # the buffer's name read back is another one's: nothing known
        ("[]", "self.register_buffer(f'offset_{k}', torch.zeros(1, 4))\n            self.offsets.append(getattr(self, f'other_{k}'))"),
    ],
)
def test_registered_or_unknown_items_are_silent(container, fill):
    assert findings(_MODULE.format(container=container, fill=fill)) == []
