"""DL302 in a module's method: a bare ``.cuda()`` in ``forward`` agrees with its inputs when the
file's own program puts everything on the current GPU with bare ``.cuda()`` and nothing else."""

from __future__ import annotations

import textwrap

from conftest import lint


def _module_method_lines(source: str) -> list[int]:
    return sorted(
        finding.line
        for finding in lint(textwrap.dedent(source), rule_code="DL302")
        if finding.code == "DL302" and "module's method" in finding.message
    )


_MODULE = """
    import torch
    from torch import nn

    class Grid(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Conv2d(4, 4, 1)

        def forward(self, x):
            ramp = torch.linspace(0, 1, x.shape[-1]).cuda()
            return self.proj(x) + ramp
"""


def test_a_program_of_bare_cuda_moves_only_is_silent():
    program = _MODULE + """
    if __name__ == "__main__":
        net = Grid().cuda()
        for _ in range(2):
            net(torch.rand(2, 4, 8, 8).cuda()).sum().backward()
    """
    assert _module_method_lines(program) == []


def test_a_program_that_picks_its_device_is_still_reported():
    program = _MODULE + """
    if __name__ == "__main__":
        dev = torch.device("cuda:1")
        net = Grid().to(dev)
        net(torch.rand(2, 4, 8, 8, device=dev))
    """
    assert _module_method_lines(program) == [11]


def test_a_module_file_without_a_program_is_still_reported():
    assert _module_method_lines(_MODULE) == [11]
