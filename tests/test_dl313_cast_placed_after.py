"""DL313: ``t.type(x.type())`` whose copy is moved on to a named device at once (directly, or
through calls that keep the device) ends where that move puts it: a wasted copy, no mix."""

from __future__ import annotations

import textwrap

from conftest import lint


def _lines(source: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(source), rule_code="DL313") if f.code == "DL313")


_HEAD = """
    import torch
    from torch import nn

    class Scale(nn.Module):
        def forward(self, q):
"""


def test_a_cast_moved_on_at_once_is_silent():
    source = _HEAD + """
            d = torch.tensor(64).type(q.type()).to(q.device)
            return q / d
    """
    assert _lines(source) == []


def test_a_cast_moved_on_through_a_device_keeping_call_is_silent():
    source = _HEAD + """
            return q / torch.rsqrt(torch.tensor(64).type(q.type()).float()).to(device=q.device)
    """
    assert _lines(source) == []


def test_a_cast_left_where_the_type_string_puts_it_is_reported():
    source = _HEAD + """
            return q / torch.sqrt(torch.tensor(64).type(q.type()))
    """
    assert _lines(source) == [8]


def test_a_cast_combined_before_the_move_is_reported():
    source = _HEAD + """
            return (q * torch.tensor(2).type(q.type())).to(q.device)
    """
    assert _lines(source) == [8]


def test_a_bare_cuda_after_the_cast_does_not_name_a_place():
    source = _HEAD + """
            return q / torch.tensor(64).type(q.type()).cuda()
    """
    assert _lines(source) == [8]
