"""DL311: a function that takes a device runs a helper of the file whose own device parameter
defaults to the CPU without handing it on - directly, or through a name it binds the helper to."""

from __future__ import annotations

from conftest import lint

_HELPERS = (
    "import torch\n"  # 1
    "def squared_gap(a, b, device=torch.device('cpu')):\n"  # 2
    "    a, b = a.to(device), b.to(device)\n"  # 3
    "    return ((a[:, None] - b[None]) ** 2).sum(-1)\n"  # 4
    "def abs_gap(a, b, device='cpu'):\n"  # 5
    "    return (a.to(device)[:, None] - b.to(device)[None]).abs().sum(-1)\n"  # 6
    "def free_gap(a, b, device=None):\n"  # 7
    "    return (a.to(device)[:, None] - b.to(device)[None]).abs().sum(-1)\n"  # 8
)


def _dl311(source):
    return [f.line for f in lint(source) if f.code == "DL311"]


def test_direct_call_leaving_the_device_out_is_flagged():
    source = _HELPERS + (
        "def nearest(points, centers, device):\n"  # 9
        "    points = points.to(device)\n"  # 10
        "    return squared_gap(points, centers).argmin(1)\n"  # 11
    )
    assert _dl311(source) == [11]


def test_helper_bound_to_a_name_then_called_without_the_device_is_flagged_at_the_binding():
    source = _HELPERS + (
        "def assign(points, centers, metric, device):\n"  # 9
        "    if metric == 'l2':\n"  # 10
        "        gap = squared_gap\n"  # 11
        "    else:\n"  # 12
        "        gap = abs_gap\n"  # 13
        "    points = points.to(device)\n"  # 14
        "    return gap(points, centers).argmin(1)\n"  # 15
    )
    assert _dl311(source) == [11, 13]


def test_device_handed_on_or_helper_without_a_cpu_default_is_silent():
    source = _HELPERS + (
        "def nearest(points, centers, device):\n"  # 9
        "    points = points.to(device)\n"  # 10
        "    a = squared_gap(points, centers, device=device)\n"  # 11
        "    b = abs_gap(points, centers, device)\n"  # 12
        "    c = free_gap(points, centers)\n"  # 13
        "    return a + b + c\n"  # 14
        "def spread(points, centers):\n"  # 15
        "    return squared_gap(points, centers)\n"  # 16
    )
    assert _dl311(source) == []


def test_helper_handed_on_uncalled_is_silent():
    source = _HELPERS + (
        "def pick(metric, device, registry):\n"  # 9
        "    gap = squared_gap\n"  # 10
        "    registry[metric] = gap\n"  # 11
        "    return torch.zeros(1, device=device), gap\n"  # 12
    )
    assert _dl311(source) == []


def test_helper_that_only_makes_new_tensors_on_its_default_is_silent():
    # the caller builds them on the host and moves them after, on purpose
    source = _HELPERS + (
        "def random_points(n, device='cpu'):\n"  # 9
        "    return torch.rand(n, 2, device=device)\n"  # 10
        "def check(device):\n"  # 11
        "    base = torch.rand(3, 2).to(device)\n"  # 12
        "    points = random_points(3)\n"  # 13
        "    return base + points.to(device)\n"  # 14
    )
    assert _dl311(source) == []
