"""DL301: ``torch.save(model, path)`` pickles a module's plain attributes too; a device it keeps
in one (``self.device = device``, then ``x.to(self.device)``) comes back with the model, and
``map_location`` moves only its tensors."""

from __future__ import annotations

import textwrap

from conftest import lint

_PROGRAM = """
import torch
from torch import nn

class Ranker(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.where = device
        self.fc = nn.Linear(4, 1)
        self.to(device)

    def score(self, x):
        return self.fc(x.to(self.where))

def export(path, device):
    ranker = Ranker(device)
    torch.save({saved}, path)

def restore(path):
    ranker = torch.load(path, map_location="cpu", weights_only={weights_only})
    return ranker
"""


def findings(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), "example.py", "DL301") if f.code == "DL301")


def test_whole_model_with_a_stored_device_saved_and_restored():
    code = _PROGRAM.format(saved="ranker", weights_only="False")
    assert findings(code) == [17, 20]


def test_state_dict_or_device_kept_current_is_silent():
    # the state dict: no attribute travels
    assert findings(_PROGRAM.format(saved="ranker.state_dict()", weights_only="True")) == []
    # a method that re-stores the attribute keeps it current
    kept = _PROGRAM.format(saved="ranker", weights_only="False").replace(
        "    def score(self, x):", "    def to(self, device):\n        self.where = device\n        return super().to(device)\n\n    def score(self, x):"
    )
    assert 17 not in findings(kept)
