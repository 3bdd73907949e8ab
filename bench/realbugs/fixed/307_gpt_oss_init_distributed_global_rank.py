# source: https://github.com/openai/gpt-oss/issues/266
# error: RuntimeError: CUDA error: invalid device ordinal (every node after the first of a multi-node torchrun)
# bug: the distributed setup reads the job-wide RANK and uses it both for the process group and as the
# CUDA device index; on node 2 of a 2x4-GPU job RANK=4 asks for cuda:4 on a host with GPUs 0-3.
import os

import torch
import torch.distributed as dist


def suppress_output(rank):
    if rank != 0:
        import builtins
        builtins.print = lambda *args, **kwargs: None


def init_distributed() -> torch.device:
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    rank = int(os.environ.get("RANK", 0))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://", world_size=world_size, rank=rank)
    torch.cuda.set_device(local_rank)
    device = torch.device(f"cuda:{local_rank}")

    if world_size > 1:
        # warm the communicator up before the first real collective
        warm = torch.ones(1, device=device)
        dist.all_reduce(warm)
        torch.cuda.synchronize(device)

    suppress_output(rank)
    return device


def generate(model, tokens):
    device = init_distributed()
    model = model.to(device)
    return model(torch.as_tensor(tokens, device=device))
