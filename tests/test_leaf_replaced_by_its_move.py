"""A tensor made on the host with ``requires_grad=True`` and then re-bound to its own move
(``z = z.to(device)``) is no leaf any more: ``.to()``/``.cuda()`` of a host tensor on a GPU run
returns a copy computed from it, and an optimizer built from that copy raises "can't optimize a
non-leaf Tensor" (DL102, reported where the leaf is made)."""

from __future__ import annotations

from conftest import lint

_LATENT = (
    "import torch\nfrom torch.autograd import Variable\n"  # 1-2
    "def invert(decoder, image, steps=10):\n"  # 3
    "    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 4
    "    decoder = decoder.to(device)\n"  # 5
    "    code = torch.zeros(1, 16, requires_grad=True)\n"  # 6
    "    code = code.to(device)\n"  # 7
    "    solver = torch.optim.SGD([code], lr=0.5)\n"  # 8
    "    for _ in range(steps):\n"  # 9
    "        solver.zero_grad()\n"  # 10
    "        (decoder(code) - image.to(device)).pow(2).mean().backward()\n"  # 11
    "        solver.step()\n"  # 12
    "    return code\n"  # 13
)


def _dl102(code):
    return [(f.code, f.line) for f in lint(code) if f.code == "DL102"]


def test_a_host_leaf_re_bound_to_its_move_and_optimized_is_reported_where_it_is_made():
    assert _dl102(_LATENT) == [("DL102", 6)]


def test_a_variable_asked_to_require_grad_and_moved_under_a_cuda_test():
    code = _LATENT.replace("torch.zeros(1, 16, requires_grad=True)", "Variable(torch.zeros(1, 16) * 0.1, requires_grad=True)")
    code = code.replace("    code = code.to(device)\n", "    if torch.cuda.is_available():\n        code = code.cuda()\n")
    assert _dl102(code) == [("DL102", 6)]


def test_a_leaf_made_on_the_device_stays_quiet():
    assert _dl102(_LATENT.replace("requires_grad=True)", "device=device, requires_grad=True)")) == []


def test_a_copy_made_a_fresh_leaf_stays_quiet():
    assert _dl102(_LATENT.replace("code.to(device)\n", "code.to(device).detach().requires_grad_()\n")) == []


def test_a_cast_or_a_moved_leaf_nobody_optimizes_stays_quiet():
    assert _dl102(_LATENT.replace("code.to(device)\n", "code.to(torch.float64)\n")) == []
    assert _dl102(_LATENT.replace("torch.optim.SGD([code], lr=0.5)", "torch.optim.SGD(decoder.parameters(), lr=0.5)")) == []


def test_a_leaf_that_never_asked_for_grad_stays_quiet():
    assert _dl102(_LATENT.replace(", requires_grad=True)", ")")) == []
