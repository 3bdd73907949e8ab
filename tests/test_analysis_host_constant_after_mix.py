"""A host constant with a dimension that meets a tensor that may be on the accelerator is
reported there (DL202); the analysis goes on as if it had been made where the program runs, so
a second host constant that meets the result is reported too, and the first is not re-reported."""

from __future__ import annotations

import textwrap

from conftest import lint


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint(textwrap.dedent(source)) if f.code in ("DL201", "DL202"))


_CALL = """
    x = torch.randn(8, device="cuda" if torch.cuda.is_available() else "cpu")
    order(x)
"""


def test_a_second_host_constant_meeting_the_mixed_result_is_reported():
    source = """
    import torch

    def order(scores):
        shifted = torch.arange(8) + scores.argsort()
        return torch.cat((torch.zeros(1, dtype=torch.long), shifted))
    """ + _CALL
    assert _findings(source) == [(5, "DL202"), (6, "DL202")]


def test_a_host_scalar_or_a_move_to_the_host_after_the_mix_stays_silent():
    source = """
    import torch

    def order(scores):
        idx = torch.arange(8) + scores.argsort()
        scaled = idx * torch.tensor(3)
        counts = idx.cpu() + torch.ones(8, dtype=torch.long)
        return scaled, counts
    """ + _CALL
    assert _findings(source) == [(5, "DL202")]
