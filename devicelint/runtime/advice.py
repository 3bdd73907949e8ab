"""What to do about a runtime mismatch: the second half of each guard message, after what was
seen. Kept apart from the checks so every message gives its advice in the same words, and so
the op-level checks can ask whether an odd tensor is a plain attribute of a module."""

from __future__ import annotations

from typing import Iterable, Optional

import torch
from torch import nn
from torch.nn.modules.loss import _Loss


def plain_tensor_attribute(named_modules: Iterable[tuple[str, nn.Module]], tensor: torch.Tensor) -> Optional[tuple[str, str, nn.Module]]:
    """(module path, attribute name, module) of the module that holds ``tensor`` as a plain
    attribute (``self.mask = torch.ones(...)``): neither a parameter nor a buffer, so
    ``module.to(device)`` leaves it where it was made. None when no module holds it so.
    Walks every module's ``__dict__``: call it only once a mismatch is found."""
    for path, module in named_modules:
        for name, value in vars(module).items():
            if value is tensor and not name.startswith("_"):
                return path, name, module
    return None


def for_plain_attribute(holder: tuple[str, str, nn.Module]) -> str:
    """A tensor left on the CPU is a plain attribute of a module (``plain_tensor_attribute``)."""
    path, name, module = holder
    label = f"`{path}` ({type(module).__name__})" if path else type(module).__name__
    return (
        f"it is `self.{name}` of {label}, a plain tensor attribute, which `.to()` does not move: "
        f'register it with `self.register_buffer("{name}", ...)` in `__init__`'
    )


def for_module_input(
    module: nn.Module,
    own_name: str,
    own_device: torch.device,
    input_device: torch.device,
    holder: Optional[tuple[str, str, nn.Module]] = None,
) -> str:
    """A module's input is not on the device of the module's own tensors. ``holder`` is what
    ``plain_tensor_attribute`` says of the input."""
    if holder is not None and input_device.type == "cpu":
        return for_plain_attribute(holder)
    if input_device.type == "cpu":
        return f"move the input to {own_device} before the call (`.to(device)`)"
    if own_device.type == "cpu":
        if isinstance(module, _Loss):
            return f"move the loss to {input_device} as you moved the model (`criterion.to(device)`): its `{own_name}` stayed on the CPU"
        return f"move the module to {input_device} (`.to(device)`): it stayed on the CPU"
    return f'move the input to {own_device} where it enters this module (`.to("{own_device}")`), or move the module to {input_device}'


def for_module_tensors() -> str:
    """A module's own parameters and buffers are not on one device."""
    return (
        "move the whole module with `.to(device)` after giving it new parameters or buffers "
        "(one assigned after the move stays where it was made)"
    )


def for_optimizer_state(pinned_step: bool) -> str:
    """A parameter's optimizer state is not on the parameter's device. ``pinned_step``: the state
    is a 0-dim ``step`` that capturable/fused optimizers keep on the parameter's device."""
    if pinned_step:
        return (
            "with `capturable=True` or `fused=True` the step count lives with its parameter: move the model before "
            "`optimizer.load_state_dict(...)`, which puts the state on each parameter's device at that moment"
        )
    return (
        "move the model before `optimizer.load_state_dict(...)`, which puts the state on each parameter's device "
        "at that moment, or build the optimizer after `model.to(device)`"
    )


def for_gradient() -> str:
    """A parameter's ``.grad`` is not on the parameter's device."""
    return (
        "`param.data = ...` moves a parameter without its gradient: move the model with `model.to(device)`, "
        "which moves gradients too, or call `optimizer.zero_grad()` before moving the parameters"
    )


def for_stale_parameters() -> str:
    """The optimizer updates tensors that are no longer the guarded modules' parameters."""
    return (
        "the optimizer updates tensors the model no longer uses (`.to()` onto meta or XLA, `to_empty()` and "
        "`load_state_dict(..., assign=True)` replace parameters): build the optimizer after moving or loading the model"
    )
