# source: https://github.com/flashinfer-ai/flashinfer/pull/2662
# error: none quoted in the PR; with base_gpu_id != 0 the workspace is made on another process's GPU than the tensors it reduces
# bug: the MNNVL all-reduce allocates its shared workspace on torch.device("cuda",
#      mapping.local_rank), taking the process's rank within the node for its GPU index. An engine
#      that starts its GPUs at base_gpu_id (rank r runs on GPU base_gpu_id + r, selected with
#      torch.cuda.set_device) gets the workspace on another process's GPU while every tensor it
#      reduces is on its own. The merged fix allocates on torch.device("cuda",
#      torch.cuda.current_device()), the GPU the process selected; the changed line is marked
#      (DL309, the closest rule: a rank used as the GPU index instead of the process's device; here
#      the node-local rank, wrong whenever the ranks do not start at GPU 0). The demo runs the
#      all-reduce only when GPUs exist.
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
            torch.device("cuda", mapping.local_rank),  # expect: DL309
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
