"""Models for the runtime tests, in a module of their own so the simulation process can import them."""

from __future__ import annotations

import torch
from torch import nn


class PositionalNet(nn.Module):
    """Two device bugs in one forward: tensors made without device= and mixed with the input."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(x.shape[-1])
        hidden = self.proj(x) + positions
        mask = torch.ones(x.shape)
        return hidden * mask


class CleanNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.proj = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, ids: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        positions = torch.arange(ids.shape[-1], device=ids.device)
        hidden = self.embed(ids) + self.embed(positions)
        return self.norm(self.proj(hidden)) * torch.tensor(scale)  # a 0-dim CPU tensor is fine


class CrashingNet(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise ValueError("broken model")


def make_positional():
    return PositionalNet(), (torch.randn(2, 4),)


def make_clean():
    return CleanNet(), (torch.tensor([[1, 2, 3, 4]]),), {"scale": 2.0}


def ddp_worker(rank: int, world_size: int, init_file: str, results_dir: str) -> None:
    """One rank of the DistributedDataParallel test (gloo, CPU): a clean training step under the
    guard, then a planted mismatch; what the guard saw goes to ``results_dir/rank.json``."""
    import json

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    import devicelint

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        torch.manual_seed(rank)
        model = DistributedDataParallel(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
        with devicelint.guard(model, on_mismatch="collect", ops=True) as clean:
            for _ in range(2):
                model(torch.randn(16, 4)).sum().backward()  # gradients all-reduced across ranks
        planted_message = None
        try:
            with devicelint.guard(model):
                model(torch.randn(16, 4, device="meta"))  # forward only: no collective to hang on
        except devicelint.DeviceMismatchError as error:
            planted_message = str(error)
        with open(f"{results_dir}/{rank}.json", "w") as stream:
            json.dump({"clean": [f.message for f in clean.findings], "planted": planted_message}, stream)
        # Without these, one rank could tear gloo down while the other still used its connection,
        # and the other died with SIGABRT (seen once in 13 runs): free DDP's reducer, which holds
        # the process group, then leave together.
        del model
        dist.barrier()
    finally:
        dist.destroy_process_group()


class TrainModeNet(nn.Module):
    """Train-mode BatchNorm, which stock fake CUDA cannot run, before a device bug."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = torch.zeros(4)
        return self.norm(self.proj(x)) + bias


def make_train_mode():
    return TrainModeNet(), (torch.randn(8, 4),)
