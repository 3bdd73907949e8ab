"""DL311: a method is handed the device its caller uses, never reads it, and places its
tensors on another device spelled out (an attribute such as ``self.device``)."""

from __future__ import annotations

from conftest import lint


def _dl311(source):
    return [f.line for f in lint(source) if f.code == "DL311"]


_RENDERER = (
    "import torch\n"  # 1
    "class Renderer:\n"  # 2
    "    def __init__(self, net):\n"  # 3
    "        self.net = net\n"  # 4
    "    @property\n"  # 5
    "    def device(self):\n"  # 6
    "        return next(self.net.parameters()).device\n"  # 7
)


def test_handed_device_ignored_for_an_attribute_device_is_flagged():
    source = _RENDERER + (
        "    def make_rays(self, pixels, target):\n"  # 8
        "        pixels = pixels.to(self.device)\n"  # 9
        "        jitter = torch.rand(pixels.shape, device=self.device)\n"  # 10
        "        return pixels + jitter\n"  # 11
        "    def render(self, pixels, run_on):\n"  # 12
        "        grid = torch.zeros(4).to(run_on)\n"  # 13
        "        return self.make_rays(pixels, run_on), grid\n"  # 14
    )
    assert _dl311(source) == [9, 10]


def test_caller_placing_on_the_callee_device_too_is_flagged():
    source = _RENDERER + (
        "    def make_rays(self, pixels, target):\n"  # 8
        "        return pixels.to(self.device)\n"  # 9
        "    def render(self, pixels, weights, run_on):\n"  # 10
        "        grid = torch.zeros(4).to(run_on)\n"  # 11
        "        rays = self.make_rays(pixels, run_on)\n"  # 12
        "        weights = weights.to(self.device)\n"  # 13
        "        return rays * weights, grid\n"  # 14
    )
    assert _dl311(source) == [9, 13]


def test_callee_that_reads_the_device_it_is_handed_stays_silent():
    source = _RENDERER + (
        "    def make_rays(self, pixels, target):\n"  # 8
        "        pixels = pixels.to(self.device)\n"  # 9
        "        return pixels.to(target)\n"  # 10
        "    def render(self, pixels, run_on):\n"  # 11
        "        grid = torch.zeros(4).to(run_on)\n"  # 12
        "        return self.make_rays(pixels, run_on), grid\n"  # 13
    )
    assert _dl311(source) == []


def test_argument_the_caller_never_uses_as_a_device_stays_silent():
    source = _RENDERER + (
        "    def make_rays(self, pixels, scale):\n"  # 8
        "        return pixels.to(self.device)\n"  # 9
        "    def render(self, pixels, scale):\n"  # 10
        "        return self.make_rays(pixels, scale * 2)\n"  # 11
    )
    assert _dl311(source) == []


def test_placement_following_a_handed_tensor_stays_silent():
    source = _RENDERER + (
        "    def scale_ids(self, ids, device=None):\n"  # 8
        "        return ids * torch.tensor([2, 3], device=ids.device)\n"  # 9
        "    def render(self, n, run_on):\n"  # 10
        "        ids = torch.arange(n, device=run_on)\n"  # 11
        "        return self.scale_ids(ids, device=run_on)\n"  # 12
    )
    assert _dl311(source) == []
