"""DL302 on two shapes of hard-coded CUDA in code its caller places:

* a CUDA device bound to a name in the function itself (``dev = torch.device("cuda")``) and
  then handed to a factory or a move: the same hard-coded device as one written in the call,
  reported where the name is bound;
* ``.cuda(x.get_device())`` on a path a test selects that is not about placement
  (``if sampling:``): a CPU run takes that path too, and ``get_device()`` is -1 there. A test
  that reads the index (``if get_device_of(x) >= 0:``), asks where ``x`` is, or a flag that
  elsewhere chooses a device still makes it a CUDA path on purpose."""

from __future__ import annotations

import textwrap

from conftest import lint


def _dl302(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), rule_code="DL302") if f.code == "DL302")


def test_a_cuda_device_bound_in_the_function_is_reported_where_it_is_bound():
    code = """
        import torch

        def shifted(points, k):
            count = points.size(0)
            gpu = torch.device("cuda")
            base = torch.arange(count, device=gpu).view(-1, 1) * k
            return points + base
    """
    assert _dl302(code) == [6]


def test_a_device_chosen_by_a_test_and_bound_is_silent():
    code = """
        import torch

        def shifted(points, k, on_gpu):
            count = points.size(0)
            chosen = torch.device("cuda" if on_gpu else "cpu")
            base = torch.arange(count, device=chosen).view(-1, 1) * k
            other = torch.device("cpu")
            if on_gpu:
                other = torch.device("cuda")
            return points + base + torch.ones(count, 1, device=other)
    """
    assert _dl302(code) == []


def test_device_index_of_a_tensor_under_an_unrelated_flag():
    code = """
        import torch

        def perturb(mean, scale, draws, noisy=True):
            if noisy:
                eps = torch.randn(draws, mean.size(0)).cuda(mean.get_device())
                return mean + eps * scale
            return mean
    """
    assert _dl302(code) == [6]


def test_device_index_under_a_test_of_that_index_or_of_a_placing_flag_is_silent():
    code = """
        import torch

        def index_of(t):
            return t.get_device() if t.is_cuda else -1

        def perturb(mean, scale, draws):
            if index_of(mean) >= 0:
                return mean + torch.randn(draws, 1).cuda(index_of(mean)) * scale
            return mean + torch.randn(draws, 1) * scale

        def perturb_flagged(mean, scale, draws, use_gpu):
            if use_gpu:
                return mean + torch.randn(draws, 1).cuda(mean.get_device()) * scale
            return mean + torch.randn(draws, 1) * scale

        def run(x, use_gpu):
            target = "cuda" if use_gpu else "cpu"
            return perturb_flagged(x.to(target), 1.0, 3, use_gpu)
    """
    assert _dl302(code) == []
