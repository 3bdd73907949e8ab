"""A `*_like` factory of a host tensor that another factory made is a factory of its own: DL202
reports it, the call that can be given `device=`, not the tensor it copies the shape of."""
from __future__ import annotations

import textwrap

from conftest import lint


def findings(code: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint(textwrap.dedent(code)) if f.severity.value in ("error", "warning"))


def test_zeros_like_of_host_indices_meeting_gpu_values():
    code = """
        import torch

        def pairs_on_host(n):
            # a host routine: indices, fine on the CPU
            return torch.tensor([[i, i + 1] for i in range(n - 1)], dtype=torch.long)

        def births_and_deaths(dist):
            pairs = pairs_on_host(dist.shape[0])
            births = torch.zeros_like(pairs[:, 0])
            deaths = dist[pairs[:, 0], pairs[:, 1]]
            return torch.stack((births, deaths), 1)

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        points = torch.randn(6, 2, device=device)
        print(births_and_deaths(torch.cdist(points, points)))
    """
    assert findings(code) == [(10, "DL202")]


def test_zeros_like_given_the_device_is_silent():
    code = """
        import torch

        def pairs_on_host(n):
            return torch.tensor([[i, i + 1] for i in range(n - 1)], dtype=torch.long)

        def births_and_deaths(dist):
            pairs = pairs_on_host(dist.shape[0])
            births = torch.zeros_like(pairs[:, 0], dtype=dist.dtype, device=dist.device)
            deaths = dist[pairs[:, 0], pairs[:, 1]]
            return torch.stack((births, deaths), 1)

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        points = torch.randn(6, 2, device=device)
        print(births_and_deaths(torch.cdist(points, points)))
    """
    assert findings(code) == []


def test_ones_like_of_a_tensor_moved_to_the_host_keeps_the_move_as_origin():
    # moved to the host on purpose: the `*_like` copy is no factory of its own there
    code = """
        import torch

        def weights(x):
            w = x.detach().to("cpu")
            return torch.ones_like(w)
    """
    assert all(code_ != "DL202" for _, code_ in findings(code))
