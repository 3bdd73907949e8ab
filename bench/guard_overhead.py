"""Overhead of devicelint.guard, on the CPU (a benchmark, not a test).

For a small MLP, a small CNN (batch 32) and a deep stack of small layers, it times the forward
with no guard, under ``guard(model)``, under ``guard(model, ops=True)``, and after a guard was
removed, interleaving the four in every round so that machine noise hits them alike, and prints
medians and ratios to the unguarded forward, beside two floors: do-nothing hooks on the same
modules and a do-nothing TorchFunctionMode. Then it times a whole training step (forward, loss,
backward, Adam step) with no guard, with only the optimizer check (``guard(optimizer=opt)``) and
with the whole step guarded (``guard(model, criterion, optimizer=opt)``), interleaved the same
way. Targets (DESIGN.md and issue 13): guard <= 1.10x on the MLP and the CNN, ops=True <= 2x,
removed 1.00x; the optimizer check <= 1.05x of a training step.

    python bench/guard_overhead.py [--rounds 30] [--calls 50]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

import devicelint


def mlp() -> tuple[nn.Module, torch.Tensor]:
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    return model, torch.randn(32, 256)


def cnn() -> tuple[nn.Module, torch.Tensor]:
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 8 * 8, 10),
    )
    return model.eval(), torch.randn(32, 3, 32, 32)


def deep_stack() -> tuple[nn.Module, torch.Tensor]:
    layers: list[nn.Module] = []
    for _ in range(20):
        layers += [nn.Linear(16, 16), nn.ReLU()]
    return nn.Sequential(*layers), torch.randn(32, 16)


def time_calls(forward: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        forward()
    return (time.perf_counter() - start) / calls


class PassThroughMode(TorchFunctionMode):
    """The floor of any op-level check: a mode that only forwards each call."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return func(*args, **(kwargs or {}))


def empty_hooks(model: nn.Module) -> list:
    """The floor of any module-level check: a do-nothing pre-hook where the guard puts one."""
    hooked = [m for m in model.modules() if any(True for _ in m.parameters(recurse=False)) or any(True for _ in m.buffers(recurse=False))]
    return [m.register_forward_pre_hook(lambda module, args, kwargs: None, with_kwargs=True) for m in hooked]


def measure(model: nn.Module, x: torch.Tensor, rounds: int, calls: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {"none": [], "guard": [], "ops": [], "removed": [], "empty hooks": [], "bare mode": []}
    forward = lambda: model(x)  # noqa: E731
    for _ in range(5):
        forward()
    for round_number in range(rounds):
        order = list(samples)
        order = order[round_number % len(order) :] + order[: round_number % len(order)]
        for setting in order:
            if setting == "none":
                samples[setting].append(time_calls(forward, calls))
            elif setting == "empty hooks":
                handles = empty_hooks(model)
                samples[setting].append(time_calls(forward, calls))
                for handle in handles:
                    handle.remove()
            elif setting == "bare mode":
                with PassThroughMode():
                    samples[setting].append(time_calls(forward, calls))
            elif setting == "removed":
                devicelint.guard(model, ops=True).__enter__().remove()
                samples[setting].append(time_calls(forward, calls))
            else:
                with devicelint.guard(model, ops=setting == "ops"):
                    samples[setting].append(time_calls(forward, calls))
    return {setting: statistics.median(values) for setting, values in samples.items()}


def measure_training_step(model: nn.Module, x: torch.Tensor, rounds: int, calls: int) -> dict[str, float]:
    criterion = nn.CrossEntropyLoss()
    target = torch.randint(0, 10, (x.shape[0],))
    optimizer = torch.optim.Adam(model.parameters())

    def training_step() -> None:
        optimizer.zero_grad()
        criterion(model(x), target).backward()
        optimizer.step()

    guards = {
        "optimizer check": lambda: devicelint.guard(optimizer=optimizer),
        "whole step": lambda: devicelint.guard(model, criterion, optimizer=optimizer),
    }
    samples: dict[str, list[float]] = {"none": [], "optimizer check": [], "whole step": []}
    for _ in range(5):
        training_step()
    for round_number in range(rounds):
        order = list(samples)
        order = order[round_number % len(order) :] + order[: round_number % len(order)]
        for setting in order:
            if setting == "none":
                samples[setting].append(time_calls(training_step, calls))
            else:
                with guards[setting]():
                    samples[setting].append(time_calls(training_step, calls))
    medians = {setting: statistics.median(values) for setting, values in samples.items()}
    # the step pre-hook alone, run directly: its cost without the noise of a whole step
    with devicelint.guard(optimizer=optimizer):
        (check,) = optimizer._optimizer_step_pre_hooks.values()
        medians["check alone"] = statistics.median(time_calls(lambda: check(optimizer, (), {}), 200) for _ in range(rounds))
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=50)
    options = parser.parse_args()
    torch.set_num_threads(1)  # one core: less scheduling noise, same relative overhead
    print(f"torch {torch.__version__}, 1 thread, {options.rounds} rounds x {options.calls} forwards, medians")
    print("ratios to the unguarded forward; the last two columns are floors: do-nothing hooks, a do-nothing mode")
    print(
        f"{'model':<12}{'no guard':>12}{'guard':>12}{'ops=True':>12}{'removed':>12}"
        f"{'guard x':>10}{'ops x':>8}{'removed x':>11}{'empty hooks x':>15}{'bare mode x':>13}"
    )
    with torch.no_grad():
        for name, build in (("MLP", mlp), ("CNN", cnn), ("deep stack", deep_stack)):
            model, x = build()
            medians = measure(model, x, options.rounds, options.calls)
            base = medians["none"]
            print(
                f"{name:<12}{base * 1e6:>10.1f}us{medians['guard'] * 1e6:>10.1f}us{medians['ops'] * 1e6:>10.1f}us"
                f"{medians['removed'] * 1e6:>10.1f}us{medians['guard'] / base:>9.2f}x{medians['ops'] / base:>7.2f}x"
                f"{medians['removed'] / base:>10.2f}x{medians['empty hooks'] / base:>14.2f}x"
                f"{medians['bare mode'] / base:>12.2f}x"
            )
    print()
    print("training step: forward, cross-entropy, backward, Adam step; ratios to the unguarded step; the last")
    print("column is the optimizer check's step pre-hook timed alone")
    print(
        f"{'model':<12}{'no guard':>12}{'optimizer':>12}{'whole step':>12}{'optimizer x':>13}{'whole step x':>14}"
        f"{'check alone':>14}"
    )
    for name, build in (("MLP", mlp), ("CNN", cnn), ("deep stack", deep_stack)):
        model, x = build()
        if name == "deep stack":
            model = nn.Sequential(model, nn.Linear(16, 10))  # ten classes, like the others
        medians = measure_training_step(model.train(), x, options.rounds, max(1, options.calls // 2))
        base = medians["none"]
        print(
            f"{name:<12}{base * 1e6:>10.1f}us{medians['optimizer check'] * 1e6:>10.1f}us"
            f"{medians['whole step'] * 1e6:>10.1f}us{medians['optimizer check'] / base:>12.2f}x"
            f"{medians['whole step'] / base:>13.2f}x{medians['check alone'] * 1e6:>12.1f}us"
        )


if __name__ == "__main__":
    main()
