"""The analysis: ``obj.prop(x)`` where ``prop`` is a ``@property`` runs the getter and calls what
it returns (not a method named ``prop``); ``if device is None:`` as a statement takes its None
branch where every construction leaves ``device`` at its None default, and a helper run on one
call's values takes it where the caller just stored None in the checked attribute."""

from __future__ import annotations

import textwrap

from conftest import lint

_HOLDER = """
    import torch
    import torch.nn as nn

    class Scorer:
        def __init__(self, device=None):
            self._head = None
            if device is None:
                self.device = "cuda" if torch.cuda.is_available() else "cpu"
            else:
                self.device = device
            self.build()

        @property
        def head(self):
            if self._head is None:
                self.build()
            return self._head

        def build(self):
            if self._head is not None:
                return
            self._head = nn.Linear(8, 2)
            self._head.to(self.device)

    def rate(scorer, rows):
        feats = torch.randn(rows, 8)
        return scorer.head({feats})

    if __name__ == "__main__":
        rate(Scorer({args}), 4)
"""


def _codes(feats: str = "feats", args: str = "") -> list[tuple[int, str]]:
    source = textwrap.dedent(_HOLDER.replace("{feats}", feats).replace("{args}", args))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


def test_a_host_input_reaches_the_module_a_property_returns():
    # (the lazily built head: `build()` runs from `__init__` right after `self._head = None`,
    # so its `is not None` guard does not return there)
    assert _codes() == [(27, "DL202")]


def test_the_input_moved_to_the_scorers_device_stays_quiet():
    assert _codes(feats="feats.to(scorer.device)") == []


_MAKER = """
    import torch
    import torch.nn as nn

    def make(width, device=None):
        if device is None:
            device = {default}
        return nn.Linear(width, 2).to(device)

    def main():
        net = make(8)
        return net(torch.randn(3, 8))

    main()
"""


def _maker_codes(default: str) -> list[tuple[int, str]]:
    source = textwrap.dedent(_MAKER.replace("{default}", default))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


def test_a_device_left_at_its_none_default_takes_the_chosen_device():
    assert _maker_codes('"cuda" if torch.cuda.is_available() else "cpu"') == [(12, "DL202")]


def test_a_device_left_at_its_none_default_that_becomes_the_cpu_stays_quiet():
    # every call leaves `device` at None, so the model is on the CPU, where the input is
    assert _maker_codes('"cpu"') == []


def test_a_model_output_read_by_its_string_key_stays_where_the_model_is():
    source = textwrap.dedent("""
        import torch
        from transformers import AutoModel

        def embed(ids):
            dev = "cuda" if torch.cuda.is_available() else "cpu"
            net = AutoModel.from_pretrained("m").to(dev)
            out = net(torch.tensor(ids).to(dev))
            layers = out["hidden_states"]
            return torch.stack(layers).numpy(), out["pooler_output"].cpu().numpy()
    """)
    assert [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")] == [(10, "DL204")]


def test_an_unknown_key_of_a_model_output_says_nothing():
    source = textwrap.dedent("""
        import torch
        from transformers import AutoModel

        def embed(ids):
            dev = "cuda" if torch.cuda.is_available() else "cpu"
            net = AutoModel.from_pretrained("m").to(dev)
            out = net(torch.tensor(ids).to(dev))
            return out["my_extra_field"].numpy()
    """)
    assert [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")] == []


def test_a_helper_that_moves_to_a_device_it_is_given_is_not_judged_by_its_callers_defaults():
    # no call of the file hands `grid` a device yet, but the function honours one when given:
    # its own analysis keeps both branches (no DL311 "ignores the device")
    source = textwrap.dedent("""
        import torch

        def grid(h, w, device=None):
            g = torch.stack(torch.meshgrid(torch.arange(h), torch.arange(w)), dim=0).float()
            if device is not None:
                g = g.to(device)
            return g

        def warp(flow):
            return grid(4, 4).to(flow.device) + flow
    """)
    assert [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")] == []
