"""Finding the tensors in a forward's inputs, and describing where one sits.

The walk is on the hot path of every guarded forward, so it builds no path strings until a
mismatch is found and handles the common flat tuple of tensors without recursion.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch.nn.utils.rnn import PackedSequence

_MAX_DEPTH = 12


def exempt(tensor: torch.Tensor) -> bool:
    """A 0-dim CPU tensor may meet a tensor on any device (PyTorch treats it as a scalar)."""
    return tensor.device.type == "cpu" and tensor.dim() == 0


def device_name(device: torch.device) -> str:
    return str(device)


def first_mismatch(value: Any, expected: torch.device, path: str, depth: int = 0) -> Optional[tuple[str, torch.Tensor]]:
    """The path and device of the first tensor in ``value`` (nested lists, tuples, dicts) that is
    not on ``expected``; a PackedSequence counts by its data (its batch_sizes live on the CPU
    by design)."""
    if isinstance(value, torch.Tensor):
        if value.device != expected and not exempt(value):
            return path, value
        return None
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, PackedSequence):
        return first_mismatch(value.data, expected, f"{path}.data", depth + 1)
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, (int, float, str, bool)) or item is None:
                continue
            found = first_mismatch(item, expected, f"{path}[{index}]", depth + 1)
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = first_mismatch(item, expected, f"{path}[{key!r}]", depth + 1)
            if found is not None:
                return found
    return None


def first_tensor(value: Any, path: str, depth: int = 0) -> Optional[tuple[str, torch.Tensor]]:
    """The first tensor in ``value`` that is not exempt, with its path."""
    if isinstance(value, torch.Tensor):
        return None if exempt(value) else (path, value)
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, PackedSequence):
        return first_tensor(value.data, f"{path}.data", depth + 1)
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = first_tensor(item, f"{path}[{index}]", depth + 1)
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = first_tensor(item, f"{path}[{key!r}]", depth + 1)
            if found is not None:
                return found
    return None


def moved_to(device: torch.device, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args`` and ``kwargs`` with every tensor that is not on ``device`` (and not exempt) moved
    there; a PackedSequence is left as it is."""
    from torch.utils._pytree import tree_map

    def move(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.device != device and not exempt(value):
            return value.to(device)
        return value

    return tree_map(move, (tuple(args), dict(kwargs)), is_leaf=lambda v: isinstance(v, PackedSequence))
