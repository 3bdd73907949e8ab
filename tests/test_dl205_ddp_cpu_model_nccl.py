"""DL205: DistributedDataParallel (or a class of the file derived from it) built around a model
still on the CPU, in a program whose process group is NCCL: the constructor broadcasts the
model's parameters over NCCL at once, which takes CUDA tensors only, so moving the wrapper
afterwards is too late."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    class Wrapper(DistributedDataParallel):
        def scatter(self, inputs, kwargs, device_ids):
            return [inputs], [kwargs]

    def build(rank):
        dist.init_process_group(backend={backend})
        torch.cuda.set_device(rank)
        net = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))
        {wrap}
        return net
"""


def _dl205(backend: str, wrap: str) -> list[int]:
    code = textwrap.dedent(_CODE.replace("{backend}", backend).replace("{wrap}", wrap))
    return [f.line for f in lint(code) if f.code == "DL205"]


def test_a_subclass_wrapping_a_cpu_model_over_nccl_is_reported():
    assert _dl205('"nccl"', "net = Wrapper(net).cuda()") == [15]


def test_the_torch_wrapper_around_a_cpu_model_over_nccl_is_reported():
    assert _dl205('"nccl"', "net = DistributedDataParallel(net).cuda()") == [15]


def test_a_model_moved_before_it_is_wrapped_is_silent():
    assert _dl205('"nccl"', "net = Wrapper(net.cuda())") == []


def test_a_program_that_may_choose_gloo_is_silent():
    assert _dl205('"nccl" if torch.cuda.is_available() else "gloo"', "net = Wrapper(net)") == []
