"""DL302: a helper of the file that returns its tensor's ``get_device()`` (-1 for a CPU tensor,
allennlp's ``get_device_of``) used as a CUDA index fails on a CPU run, as ``x.get_device()``
itself does."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint

_MODULE = """
import torch
from torch import nn

def gpu_of(t):
{helper}

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x) + self.bias.cuda(gpu_of(x))
"""


def _move_line(code: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(code).splitlines(), 1) if "self.bias.cuda" in line)


def findings(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), "example.py", "DL302") if f.code == "DL302")


@pytest.mark.parametrize(
    "helper",
    [
        "    return t.get_device() if t.is_cuda else -1",
        "    if t.is_cuda:\n        return t.get_device()\n    return -1",
        "    return t.get_device()",
    ],
)
def test_helper_returning_get_device_is_a_tensor_gpu_index(helper):
    code = _MODULE.format(helper=helper)
    assert findings(code) == [_move_line(code)]


@pytest.mark.parametrize(
    "helper",
    [
        # a configured index, not the tensor's
        "    return 0 if t is None else 1",
        "    return t.get_device() if t.is_cuda else None",
    ],
)
def test_other_helpers_are_not(helper):
    code = textwrap.dedent(_MODULE.format(helper=helper))
    assert all("get_device" not in f.message for f in lint(code, "example.py", "DL302") if f.code == "DL302")


def test_guarded_move_through_the_helper_is_silent():
    code = _MODULE.format(helper="    return t.get_device() if t.is_cuda else -1").replace(
        "self.bias.cuda(gpu_of(x))", "(self.bias.cuda(gpu_of(x)) if x.is_cuda else self.bias)"
    )
    assert findings(code) == []
