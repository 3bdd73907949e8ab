# source: https://github.com/huggingface/sentence-transformers/pull/3373
# error: RuntimeError: CUDA error: invalid device ordinal (multi-node DDP, or k8s pods with fewer visible GPUs than the rank)
# bug: the helper that names the default device maps torch.distributed.get_rank() - the job-wide rank -
# straight to a CUDA ordinal, so on a second node (or a pod with one GPU) the device does not exist.
import torch
import torch.distributed as dist
from torch import nn


def get_device_name() -> str:
    """Pick 'cuda:N', 'mps', 'npu' or 'cpu' for the current process."""
    if torch.cuda.is_available():
        if torch.distributed.is_initialized():
            local_rank = torch.distributed.get_rank()
            return f"cuda:{local_rank}"  # expect: DL309
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


class SentenceEncoder(nn.Module):
    def __init__(self, dim=384, device=None):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        if device is None:
            device = get_device_name()
        self.to(device)

    def forward(self, features):
        return self.proj(features)


def encode(model, batches):
    outputs = []
    for batch in batches:
        outputs.append(model(batch.to(next(model.parameters()).device)))
    if dist.is_initialized():
        dist.barrier()
    return torch.cat(outputs)
