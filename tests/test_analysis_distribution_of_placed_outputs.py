"""The analysis: a module whose ``__init__`` moves its weights to a device it keeps from its
constructor argument (``self.device = device``, then ``.to(self.device)``) is on that argument's
device; and a ``torch.distributions`` object built from a model's outputs of unknown kind (an
element of what ``forward`` returns) is where they are, and so are its samples."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import numpy as np
    import torch
    from torch import nn

    class Policy(nn.Module):
        def __init__(self, n_in, n_out, device):
            super().__init__()
            self.device = device
            self.body = nn.Linear(n_in, n_out).to({target})
            self.value = nn.Linear(n_in, 1).to({target})

        def forward(self, obs):
            x = torch.as_tensor(obs, dtype=torch.float32).to(self.device)
            return self.body(x), self.value(x)

        def act(self, obs):
            logits, value = self.forward(obs)
            dist = torch.distributions.Categorical(logits=logits)
            return dist.sample(), value

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    policy = Policy(4, 2, device)
    actions, _ = policy.act(np.zeros((3, 4), dtype=np.float32))
    chosen = actions.numpy()
"""


def _dl204(target: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{target}", target))) if f.code == "DL204"]


def test_samples_of_a_policy_kept_on_its_device_argument_are_on_the_gpu():
    assert _dl204("self.device") == [25]


def test_a_policy_whose_weights_stay_on_the_host_is_silent():
    assert _dl204('"cpu"') == []
