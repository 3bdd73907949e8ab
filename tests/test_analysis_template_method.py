"""A base class's method that calls a method only its subclasses define (the template-method
pattern: ``Runner.run`` calls ``self._step(batch)``, which ``Trainer`` defines) runs the
subclass's definition: the object is one of that subclass. Where the file holds one such
definition (or, among several, one in the only class the program builds), the call gives
what that definition returns. And a module of the file whose ``forward`` returns a dict
written out (``{"loss": loss}``) gives that dict: ``out["loss"]`` is where ``forward`` put it,
on the caller's module's device."""

from __future__ import annotations

import textwrap

from conftest import lint

_TEMPLATE = """
    import numpy as np
    import torch
    import torch.nn as nn

    class Runner:
        def __init__(self, net, device):
            self.net = net
            self.device = device

        def run(self, batches):
            totals = []
            for batch in batches:
                totals.append(self._step(batch))
            return np.mean(totals)

    {subclasses}

    def main():
        device = torch.device("cuda")
        net = nn.Linear(4, 1).to(device)
        return {built}(net, device).run([torch.rand(3, 4)])
"""

_ON_DEVICE = """
    class Scorer(Runner):
        def _step(self, batch):
            return self.net(batch.to(self.device)).mean()
"""

_ON_HOST = """
    class Reader(Runner):
        def _step(self, batch):
            return self.net(batch.to(self.device)).mean().item()
"""


def _dl204(code: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(code)) if f.code == "DL204"]


def test_the_only_subclass_definition_runs():
    assert _dl204(_TEMPLATE.format(subclasses=_ON_DEVICE, built="Scorer")) == [14]


def test_a_subclass_returning_numbers_is_silent():
    assert _dl204(_TEMPLATE.format(subclasses=_ON_HOST, built="Reader")) == []


def test_the_built_subclass_decides_among_several():
    assert _dl204(_TEMPLATE.format(subclasses=_ON_DEVICE + _ON_HOST, built="Scorer")) == [14]
    assert _dl204(_TEMPLATE.format(subclasses=_ON_DEVICE + _ON_HOST, built="Reader")) == []


def test_several_built_subclasses_say_nothing():
    code = _TEMPLATE.format(subclasses=_ON_DEVICE + _ON_HOST, built="Scorer") + "\n    other = Reader(None, None)\n"
    assert _dl204(code) == []


_DICT_FORWARD = """
    import numpy as np
    import torch
    import torch.nn as nn

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 2)

        def forward(self, inputs):
            scores = self.proj(inputs["features"])
            return {{"loss": scores.pow(2).mean(), "steps": {steps}}}

    def evaluate(device):
        head = Head().to(device)
        seen = []
        for _ in range(4):
            out = head({{"features": torch.rand(5, 8, device=device)}})
            seen.append(out["{key}"])
        return np.sum(seen)

    evaluate(torch.device("cuda"))
"""


def test_a_dict_of_the_forward_keeps_its_entries():
    assert _dl204(_DICT_FORWARD.format(steps="3", key="loss")) == [20]


def test_a_number_entry_of_that_dict_is_silent():
    assert _dl204(_DICT_FORWARD.format(steps="3", key="steps")) == []


def test_a_host_model_gives_host_entries():
    code = _DICT_FORWARD.format(steps="3", key="loss").replace("Head().to(device)", "Head()").replace(", device=device)", ")")
    assert _dl204(code) == []
