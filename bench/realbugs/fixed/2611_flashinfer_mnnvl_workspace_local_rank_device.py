# source: https://github.com/flashinfer-ai/flashinfer/pull/2662
# fixed twin: the workspace is allocated on torch.device("cuda", torch.cuda.current_device()), the GPU the process selected, instead of the GPU numbered by the node-local rank (the merged PR 2662).
from dataclasses import dataclass

import torch


@dataclass
class Mapping:
    world_size: int
    rank: int
    tp_size: int
    tp_rank: int
    local_rank: int


class McastGPUBuffer:
    def __init__(self, buf_size, group_size, group_rank, device, comm_backend=None):
        self.group_size = group_size
        self.group_rank = group_rank
        self.device = device
        self.buffer = torch.zeros(buf_size // 4, dtype=torch.float32, device=device)

    def get_buffer(self, n):
        return self.buffer[:n]


class MNNVLAllReduceWorkspace:
    def __init__(self, mapping: Mapping, requested_workspace_size=1 << 12, comm_backend=None):
        self.mapping = mapping
        self.mcast_buffer_handle = McastGPUBuffer(
            requested_workspace_size,
            mapping.tp_size,
            mapping.tp_rank,
            torch.device("cuda", torch.cuda.current_device()),
            comm_backend,
        )

    def all_reduce(self, inp: torch.Tensor) -> torch.Tensor:
        workspace = self.mcast_buffer_handle.get_buffer(inp.numel())
        workspace.copy_(inp.reshape(-1))
        return workspace.view_as(inp) * self.mapping.tp_size


if __name__ == "__main__":
    base_gpu_id = 0
    local_rank = 0
    if torch.cuda.is_available():
        torch.cuda.set_device(base_gpu_id + local_rank)
        mapping = Mapping(world_size=1, rank=0, tp_size=1, tp_rank=0, local_rank=local_rank)
        workspace = MNNVLAllReduceWorkspace(mapping)
        hidden = torch.randn(4, 8, device=torch.cuda.current_device())
        print(workspace.all_reduce(hidden).sum().item())
    else:
        print("all-reduce needs GPUs; skipped")
