"""DistributedDataParallel for real: two processes, the gloo backend, on the CPU."""

from __future__ import annotations

import json

import torch.multiprocessing as torch_multiprocessing

from runtime_models import ddp_worker


def test_guard_under_distributed_data_parallel_two_ranks(tmp_path):
    world_size = 2
    torch_multiprocessing.spawn(
        ddp_worker, args=(world_size, str(tmp_path / "init"), str(tmp_path)), nprocs=world_size, join=True
    )
    for rank in range(world_size):
        result = json.loads((tmp_path / f"{rank}.json").read_text())
        assert result["clean"] == []  # DDP's wrapper receives and scatters inputs: no false alarm
        assert result["planted"] == (
            "module.0 (Linear): input `args[0]` is on meta, parameter `weight` is on cpu; "
            "move the module to meta (`.to(device)`): it stayed on the CPU"
        )
