"""The analysis: an object of unknown kind that a move put somewhere, indexed by a tensor of one
or more dimensions, is a tensor (only tensors and arrays take such an index, and only torch
objects are moved)."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch

    class Bank:
        def __init__(self):
            self.rows = []
            self.device = "cuda" if torch.cuda.is_available() else "cpu"

        def freeze(self):
            self.rows = torch.cat(self.rows, 0)

        def lookup(self, n):
            bank = self.rows.to(self.device)
            chosen = bank[torch.arange(n)]
            queries = torch.randn(3, 16, device=self.device)
            nearest = torch.cdist(queries, chosen).argmin(1)
            chosen = chosen.cpu()
            return chosen[{index}]
"""


def _dl207(index: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{index}", index))) if f.code == "DL207"]


def test_a_host_copy_indexed_by_a_gpu_index_is_reported():
    assert _dl207("nearest") == [18]


def test_a_host_copy_indexed_by_a_host_index_is_silent():
    assert _dl207("nearest.cpu()") == []
