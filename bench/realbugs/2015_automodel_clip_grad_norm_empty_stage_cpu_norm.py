# source: https://github.com/NVIDIA-NeMo/Automodel/pull/793
# error: (pipeline-parallel stage without gradients, NCCL) RuntimeError: No backend type associated with device type cpu (all_reduce of the norm)
# bug: the training utilities' gradient clipping groups the parameters, takes a norm per group and
#      combines them; when a rank has no gradients at all (a pipeline stage whose parameters got
#      none), the combined norm is a bare torch.tensor(0.0), on the CPU, and it is then
#      all-reduced over the pipeline group, which NCCL refuses for a host tensor (and the clipping
#      coefficient is then a host tensor on every rank). The fix (PR 793, commit 64d84c9) picks the
#      current CUDA device (the CPU without one) as the target device of every norm and makes that
#      zero there; the torch.tensor(0.0) line is marked (DL316, a host tensor handed to a collective
#      of an NCCL process group; marked DL202 until DL316 was added in session 16). The PR also moves each group norm to that device
#      (for norms of gradients kept elsewhere); that case and the DTensor grouping are left out.
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn


@torch.no_grad()
def _clip_grad_norm_impl(parameters, max_norm, norm_type=2.0, pp_group=None):
    parameters = list(parameters)
    sharding_groups = {}
    for p in parameters:
        if p.grad is None:
            continue
        sharding_groups.setdefault(("regular", "regular"), []).append(p)

    group_norms = []
    for group_params in sharding_groups.values():
        grads = [p.grad for p in group_params]
        group_norm = torch.nn.utils.get_total_norm(grads, norm_type)
        group_norms.append(group_norm.clone().detach())

    if len(group_norms) == 0:
        total_norm = torch.tensor(0.0)  # expect: DL316
    elif len(group_norms) == 1:
        total_norm = group_norms[0]
    else:
        target_device = group_norms[0].device
        group_norms = [gn.to(target_device) for gn in group_norms]
        total_norm = torch.tensor(0.0, device=target_device)
        for gn in group_norms:
            total_norm += gn ** norm_type
        total_norm = total_norm ** (1.0 / norm_type)

    if pp_group is not None:
        if math.isinf(norm_type):
            dist.all_reduce(total_norm, op=dist.ReduceOp.MAX, group=pp_group)
        else:
            total_norm = total_norm ** norm_type
            dist.all_reduce(total_norm, op=dist.ReduceOp.SUM, group=pp_group)
            total_norm = total_norm ** (1.0 / norm_type)

    for group_params in sharding_groups.values():
        torch.nn.utils.clip_grads_with_norm_(group_params, max_norm, total_norm)
    return total_norm


def clip_grad_norm(max_grad_norm, model_parts, pp_enabled=False):
    params = [p for m in model_parts for p in m.parameters() if p.requires_grad]
    pp_group = dist.group.WORLD if pp_enabled else None
    return _clip_grad_norm_impl(params, max_grad_norm, pp_group=pp_group).item()


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=0, world_size=1)
    device = torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    try:
        idle_stage = nn.Linear(8, 8).to(device)  # a stage that got no gradients this step
        print(clip_grad_norm(1.0, [idle_stage], pp_enabled=True))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
