"""Finding the tensors in a forward's inputs, and describing where one sits.

The walk is on the hot path of every guarded forward, so it builds no path strings until a
mismatch is found and handles the common flat tuple of tensors without recursion.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence

_MAX_DEPTH = 12
# the dtypes PyTorch's indices, lengths and class targets come in (index ops take no other)
_INDEX_DTYPES = frozenset({torch.int32, torch.int64})


def exempt(tensor: torch.Tensor) -> bool:
    """A 0-dim CPU tensor may meet a tensor on any device (PyTorch treats it as a scalar)."""
    return tensor.device.type == "cpu" and tensor.dim() == 0


def host_indices(tensor: torch.Tensor) -> bool:
    """An int32/int64 tensor on the CPU: lengths, indices, targets. PyTorch takes these from the
    CPU in several places whatever the other tensors' device: ``pack_padded_sequence`` requires
    its lengths there, ``ctc_loss`` accepts its targets and lengths there, an accelerator tensor
    may be indexed with them."""
    return tensor.device.type == "cpu" and tensor.dtype in _INDEX_DTYPES


def torch_layer(module: nn.Module) -> bool:
    """One of torch.nn's own layers (not a subclass defined elsewhere): its inputs' rules are
    PyTorch's, known here."""
    return type(module).__module__.startswith("torch.nn.")


def exempt_input(tensor: torch.Tensor, module: Optional[nn.Module]) -> bool:
    """An input that may differ from ``module``'s device without being a bug: a 0-dim CPU tensor;
    and, handed to a module that is not one of torch.nn's layers, CPU indices (``host_indices``):
    whether they are legal depends on how the module's code uses them, which is checked where
    they are used (by a torch.nn layer's own check, or by ``ops=True``)."""
    if exempt(tensor):
        return True
    return module is not None and host_indices(tensor) and not torch_layer(module)


def device_name(device: torch.device) -> str:
    return str(device)


def first_mismatch(
    value: Any, expected: torch.device, path: str, depth: int = 0, module: Optional[nn.Module] = None
) -> Optional[tuple[str, torch.Tensor]]:
    """The path and device of the first tensor in ``value`` (nested lists, tuples, dicts) that is
    not on ``expected``; a PackedSequence counts by its data (its batch_sizes live on the CPU
    by design). With ``module``, the inputs ``exempt_input`` allows that module are skipped."""
    if isinstance(value, torch.Tensor):
        if value.device != expected and not exempt_input(value, module):
            return path, value
        return None
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, PackedSequence):
        return first_mismatch(value.data, expected, f"{path}.data", depth + 1, module)
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if isinstance(item, (int, float, str, bool)) or item is None:
                continue
            found = first_mismatch(item, expected, f"{path}[{index}]", depth + 1, module)
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = first_mismatch(item, expected, f"{path}[{key!r}]", depth + 1, module)
            if found is not None:
                return found
    return None


def iter_tensors(value: Any, path: str, depth: int = 0) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor in ``value`` (nested lists, tuples, dicts; a PackedSequence by its data)
    that is not exempt, with its path, in argument order."""
    if isinstance(value, torch.Tensor):
        if not exempt(value):
            yield path, value
        return
    if depth > _MAX_DEPTH:
        return
    if isinstance(value, PackedSequence):
        yield from iter_tensors(value.data, f"{path}.data", depth + 1)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if not (isinstance(item, (int, float, str, bool)) or item is None):
                yield from iter_tensors(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from iter_tensors(item, f"{path}[{key!r}]", depth + 1)


def moved_to(
    device: torch.device, args: tuple[Any, ...], kwargs: dict[str, Any], module: Optional[nn.Module] = None
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args`` and ``kwargs`` with every tensor that is not on ``device`` (and not exempt, nor,
    with ``module``, an input ``exempt_input`` allows it) moved there; a PackedSequence is left
    as it is."""
    from torch.utils._pytree import tree_map

    def move(value: Any) -> Any:
        if isinstance(value, torch.Tensor) and value.device != device and not exempt_input(value, module):
            return value.to(device)
        return value

    return tree_map(move, (tuple(args), dict(kwargs)), is_leaf=lambda v: isinstance(v, PackedSequence))
