"""The analysis: an f-string that writes out an accelerator's type and fills in only its ordinal
(``f"cuda:{gpu}"``) names that accelerator, also as one arm of a choice by availability."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import numpy as np
    import torch
    from torch import nn

    class Runner:
        def __init__(self, gpu):
            self.gpu = gpu

        @property
        def device(self):
            return torch.device({choice})

        def scores(self, batch):
            net = nn.Linear(4, 2)
            net.to(self.device)
            out = net(batch.to(self.device))
            return np.asarray(out.detach())
"""


def _dl204(choice: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{choice}", choice))) if f.code == "DL204"]


def test_an_indexed_gpu_chosen_by_availability_is_an_accelerator():
    assert _dl204("f'cuda:{self.gpu}' if torch.cuda.is_available() and self.gpu is not None else 'cpu'") == [18]


def test_a_formatted_host_device_stays_silent():
    # the f-string's fixed text is no accelerator: a host name with a suffix
    assert _dl204("f'cpu{self.gpu}' if torch.cuda.is_available() else 'cpu'") == []
