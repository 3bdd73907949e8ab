"""Three data-flow paths by which a host tensor reaches a module's computation:

* a lazily made attribute: ``if self.cache is None: self.cache = make(...)`` (or a method that
  sets it) - after the test the attribute holds what that path made, as for a parameter
  defaulted to None;
* the template-method pattern where the base declares the hook as a stub
  (``raise NotImplementedError``): ``self.hook(x)`` in the base runs the subclass's definition,
  as where the base does not define it at all;
* a helper whose factories on both branches make the tensor it keeps: each branch's factory is
  reported, not only the first (the helper's attribution kept the other places)."""

from __future__ import annotations

import textwrap

from conftest import lint


def _dl202(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code)) if f.code == "DL202")


_LAZY = """
    import torch
    from torch import nn

    class Jitter(nn.Module):
        def __init__(self, rate):
            super().__init__()
            self.rate = rate
            self.noise = None

        def forward(self, h):
            if self.noise is None:
                {fill}
            return h * self.noise

        def fill(self, h):
            self.noise = {made}
"""


def test_attribute_filled_lazily_by_a_method_meets_the_input():
    code = _LAZY.format(fill="self.fill(h)", made="torch.rand(h.shape[-1])")
    assert _dl202(code) == [17]


def test_attribute_filled_lazily_in_place_meets_the_input():
    code = _LAZY.format(fill="self.noise = torch.rand(h.shape[-1])", made="None")
    assert _dl202(code) == [13]


def test_lazily_filled_attribute_made_on_the_input_device_is_silent():
    code = _LAZY.format(fill="self.fill(h)", made="torch.rand(h.shape[-1], device=h.device)")
    assert _dl202(code) == []


_TEMPLATE = """
    import torch
    from torch import nn

    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.keep = None

        def draw(self, h):
            {stub}

        def forward(self, h):
            if self.keep is None:
                self.draw(h)
            return self.keep.expand_as(h) * h

    class RowMasked(Masked):
        def draw(self, h):
            rows, cols = h.shape
            if self.training:
                keep = torch.ones(rows, 1)
            else:
                keep = torch.ones(1, cols){device}
            self.keep = keep
"""


def test_subclass_hook_under_an_abstract_stub_runs_and_both_branches_are_reported():
    code = _TEMPLATE.format(stub="raise NotImplementedError", device="")
    assert _dl202(code) == [22, 24]


def test_subclass_hook_under_a_docstring_stub_runs_too():
    code = _TEMPLATE.format(stub='"""Subclasses draw the mask."""', device="")
    assert _dl202(code) == [22, 24]


def test_a_base_hook_with_a_body_of_its_own_is_not_replaced():
    # the base really draws (its own tensor on the input's device); a subclass overriding it
    # says nothing about which body runs on an object of the base
    code = _TEMPLATE.format(stub="self.keep = torch.ones_like(h)", device="")
    assert _dl202(code) == []


def test_subclass_hook_made_on_the_input_device_is_silent():
    code = _TEMPLATE.format(stub="raise NotImplementedError", device="").replace(
        "torch.ones(rows, 1)", "torch.ones(rows, 1, device=h.device)"
    ).replace("torch.ones(1, cols)", "torch.ones(1, cols, device=h.device)")
    assert _dl202(code) == []


_STALE_CACHE = """
    import torch
    from torch import nn

    class Blur(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = None

        def forward(self, img):
            if self.weight is None or self.weight.shape[0] != img.shape[1]:
                self.weight = torch.full((img.shape[1], 1, 3, 3), 1.0 / 9{device})
            return nn.functional.conv2d(img, self.weight, groups=img.shape[1])
"""


def test_a_cache_rebuilt_when_missing_or_stale_holds_what_the_rebuild_made():
    assert _dl202(_STALE_CACHE.format(device="")) == [12]
    assert _dl202(_STALE_CACHE.format(device=", device=img.device")) == []
