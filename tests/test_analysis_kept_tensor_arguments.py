"""A module that keeps a constructor argument as a plain attribute holds what its constructions
hand in: where every construction the file makes hands a tensor (or a distribution) on the
run's device, its methods and the code outside read that tensor there (``Module.to()`` does not
touch a plain attribute)."""

from __future__ import annotations

import textwrap

from conftest import lint

_CLASS = """
    import numpy as np
    import torch
    from torch import nn
    from torch.distributions import Normal

    class Bounded(nn.Module):
        def __init__(self, low, prior):
            super().__init__()
            self.low = low
            self.prior = prior

        def draw(self, n):
            z = self.prior.sample((n, 2))
            return torch.zeros(n, 2) + z

        def forward(self, x):
            return torch.clamp(x, min=self.low)

    device = "cuda" if torch.cuda.is_available() else "cpu"
"""


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint(textwrap.dedent(source)) if f.code in ("DL201", "DL202", "DL204"))


def test_tensors_handed_on_the_device_are_read_there():
    source = _CLASS + """
    low = torch.zeros(2).to(device)
    model = Bounded(low, Normal(low, torch.ones(2).to(device))).to(device)
    model.draw(4)
    scaled = model.low * np.ones(2)
    """
    assert _findings(source) == [(15, "DL202"), (25, "DL204")]


def test_constructions_that_disagree_or_hand_host_tensors_say_nothing():
    source = _CLASS + """
    low = torch.zeros(2).to(device)
    a = Bounded(low, Normal(low, torch.ones(2).to(device)))
    b = Bounded(torch.zeros(2), Normal(torch.zeros(2), torch.ones(2)))
    a.draw(4)
    scaled = a.low * np.ones(2)
    """
    assert _findings(source) == []
