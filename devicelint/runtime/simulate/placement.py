"""Putting the model, its inputs and the optimizer's parameters on fake devices the way a
training script puts them on real ones.

What PyTorch does that this has to make up for (torch 2.13):

- ``model.to(device)`` keeps each parameter object when it moves between the CPU and a real GPU
  (``param.data = ...``), so an optimizer built before the move still updates the model. Onto a
  fake device it makes new parameter objects instead (a real and a fake tensor are not of
  compatible kinds), and a fake parameter cannot be moved again at all: ``_apply`` swaps fake
  parameters in place, which fails while fake-tensor bookkeeping holds a weak reference to
  them. So the simulation moves real modules only, and hands the optimizer the new parameters
  (:func:`move_model`, :func:`remap_optimizer`); its state stays where it was.
- A factory (``MODULE:FACTORY``, or a function given to ``simulate``) runs on real CPU tensors
  under :class:`FactoryPlacement`: a move to a GPU, or a tensor made on one, gives a fake tensor
  there, so ``nn.Linear(...).to("cuda:1")`` in a model's ``__init__`` works as on a machine with
  two GPUs, and the parameters a module gets by such a move are matched to the ones it had.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.nn.utils.rnn import PackedSequence
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_map

from devicelint.runtime.simulate import KeepOnCPU
from devicelint.runtime.simulate.execution import is_real, names_a_gpu


def on_the_cpu(model: nn.Module) -> bool:
    """Every parameter and buffer of ``model`` is a real CPU tensor: nothing placed it yet."""
    tensors = [*model.parameters(), *model.buffers()]
    return all(is_real(tensor) and tensor.device.type == "cpu" for tensor in tensors)


def _parameter_slots(model: nn.Module) -> list[tuple[nn.Module, str, nn.Parameter]]:
    return [
        (module, name, parameter)
        for module in model.modules()
        for name, parameter in module._parameters.items()
        if parameter is not None
    ]


def _retie(slots: list[tuple[nn.Module, str, nn.Parameter]], source_of: Any) -> dict[int, nn.Parameter]:
    """After a move made new parameters: ``{id(old parameter): new parameter}``, with a
    parameter that two modules shared (tied weights) shared again."""
    replaced: dict[int, nn.Parameter] = {}
    for module, name, old in slots:
        current = module._parameters[name]
        source = source_of(old, current)
        if source is None:
            continue
        if id(source) in replaced:
            module._parameters[name] = replaced[id(source)]
        else:
            replaced[id(source)] = current
    return replaced


def move_model(model: nn.Module, device: str) -> dict[int, nn.Parameter]:
    """``model.to(device)`` onto the fake device (inside the fake mode); returns the new parameter
    of each old one."""
    slots = _parameter_slots(model)
    model.to(device)
    return _retie(slots, lambda old, current: old if current is not old else None)


def remap_optimizer(optimizer: Any, replaced: dict[int, nn.Parameter]) -> None:
    """Point ``optimizer`` at the parameters that replaced its own, keeping their state (and the
    state's devices) as they are."""
    if not replaced:
        return
    for group in optimizer.param_groups:
        group["params"] = [replaced.get(id(parameter), parameter) for parameter in group["params"]]
    state = optimizer.state
    for old in list(state):
        new = replaced.get(id(old))
        if new is not None:
            state[new] = state.pop(old)


def place(value: Any, device: str) -> Any:
    """``value`` (inputs, kwargs, a target) with every CPU tensor moved to ``device`` as a training
    loop moves a batch, except what :func:`devicelint.keep_on_cpu` marks; tensors already on a
    GPU stay. A packed sequence moves its data and keeps its batch sizes on the CPU."""

    def move(leaf: Any) -> Any:
        if isinstance(leaf, KeepOnCPU):
            return leaf.value
        if isinstance(leaf, PackedSequence):
            return leaf.to(device) if leaf.data.device.type == "cpu" else leaf
        if isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu":
            return leaf.to(device)
        return leaf

    return tree_map(move, value, is_leaf=lambda leaf: isinstance(leaf, (KeepOnCPU, PackedSequence)))


def _storage_id(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata


class FactoryPlacement(TorchFunctionMode):
    """Active while a factory runs on real CPU tensors: moving a tensor to a GPU, or making one
    there, gives a fake tensor on that device. Everything else runs for real."""

    def __init__(self, fake_mode: FakeTensorMode) -> None:
        super().__init__()
        self.fake_mode = fake_mode
        # storage of a fake tensor a move returned -> (the real tensor moved, that fake tensor);
        # the fake one is kept so that its storage's address is not reused meanwhile
        self._moved: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name == "pin_memory":
            return args[0]  # pinned memory needs the CUDA runtime; it is a CPU tensor all the same
        if not names_a_gpu(name, args, kwargs):
            return func(*args, **kwargs)
        with self.fake_mode:
            result = func(*args, **kwargs)
        if name in ("to", "cuda") and args and is_real(args[0]) and isinstance(result, FakeTensor):
            self._moved[_storage_id(result)] = (args[0], result)
        return result

    def replaced_parameters(self, model: nn.Module) -> dict[int, nn.Parameter]:
        """``{id(real parameter): fake parameter}`` for the parameters of ``model`` that a move
        in the factory replaced (a module keeps the fake tensor's storage when it wraps it in a
        new parameter); tied parameters are tied again."""

        def source_of(old: nn.Parameter, current: nn.Parameter) -> Optional[torch.Tensor]:
            if not isinstance(current, FakeTensor):
                return None
            moved = self._moved.get(_storage_id(current))
            return moved[0] if moved is not None else None

        return _retie(_parameter_slots(model), source_of)
