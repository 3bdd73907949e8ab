"""DL302: a helper whose device parameter defaults to None and falls back to CUDA
(``if device is None: device = "cuda"``), called without one from a module's method: reported at
the fallback, as a CUDA default in the signature is reported at the call."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch
    from torch import nn

    def place(batch, device=None):
        if device is None:
            device = torch.device("cuda")
        return {k: v.to(device) for k, v in batch.items()}

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)

        def forward(self, batch):
            batch = place(batch{passed})
            return self.emb(batch["ids"])
"""


def _dl302(passed: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{passed}", passed)), rule_code="DL302") if f.code == "DL302"]


def test_a_none_default_falling_back_to_cuda_left_by_a_forward_is_reported_at_the_fallback():
    assert _dl302("") == [7]


def test_the_same_helper_given_the_input_device_is_silent():
    assert _dl302(", device=self.emb.weight.device") == []
