"""On a real GPU (skipped without one): the guard and the op-level check against real CUDA
kernels, which the CPU-only tests only simulate."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import devicelint
from runtime_models import CleanNet, PositionalNet

pytestmark = pytest.mark.cuda


def test_forgotten_input_move_is_reported_before_torchs_own_error():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)).cuda()
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model):
            model(torch.randn(8, 4))
    assert str(raised.value) == (
        "0 (Linear): input `args[0]` is on cpu, parameter `weight` is on cuda:0; "
        "move the input to cuda:0 before the call (`.to(device)`)"
    )


def test_device_less_factory_in_forward_on_cuda():
    model = PositionalNet().cuda()
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4, device="cuda"))
    assert [f.runtime.op for f in g.findings] == ["Tensor.add"]
    assert g.findings[0].runtime.created_by.startswith("torch.arange at runtime_models.py:")


def test_clean_model_on_cuda_and_simulation_agrees():
    model = CleanNet().cuda()
    with devicelint.guard(model, ops=True) as g:
        model(torch.tensor([[1, 2, 3]], device="cuda"), scale=2.0)
    assert g.findings == []
    assert list(devicelint.simulate(CleanNet(), torch.tensor([[1, 2, 3]]))) == []


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_gpus_model_parallel_and_a_misplaced_input():
    class Split(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.first = nn.Linear(4, 4).to("cuda:0")
            self.second = nn.Linear(4, 4).to("cuda:1")

        def forward(self, x, forget=False):
            hidden = self.first(x)
            return self.second(hidden if forget else hidden.to("cuda:1"))

    model = Split()
    with devicelint.guard(model, on_mismatch="collect") as g:
        model(torch.randn(2, 4, device="cuda:0"))
        assert g.findings == []
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4, device="cuda:0"), forget=True)
    assert [f.message for f in g.findings] == [
        "second (Linear): input `args[0]` is on cuda:0, parameter `weight` is on cuda:1; "
        'move the input to cuda:1 where it enters this module (`.to("cuda:1")`), or move the module to cuda:0'
    ]
