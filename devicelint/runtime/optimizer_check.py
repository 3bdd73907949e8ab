"""The optimizer half of ``devicelint.guard(..., optimizer=opt)``, run by a step pre-hook, so
before ``opt.step()`` touches anything: every parameter that has a gradient must have that
gradient and its optimizer state on its own device, and (at the first step after the guard is
entered) the optimizer must update the guarded modules' parameters, not tensors they replaced.

What PyTorch 2.13 does, as checked in tests/test_runtime_optimizer.py:
- ``load_state_dict`` puts floating-point state on each parameter's device *at that moment*:
  loaded before ``model.to(device)``, the state stays behind when the model moves (the parameter
  object is kept, only its data moves). ``map_location`` on ``torch.load`` does not change that.
- Adam's ``step`` (and that of AdamW, RMSprop, Adagrad, ...) is a 0-dim CPU tensor by design,
  unless the group is ``capturable`` or ``fused``: then it lives on the parameter's device.
- A mismatch is not always an error: Adam stops with PyTorch's own message, SGD with a CPU
  ``momentum_buffer`` for a meta parameter steps without complaint.
- ``.grad`` cannot be set to another device than its parameter, and ``module.to()`` moves
  gradients along; ``param.data = param.data.cuda()`` by hand moves the data alone.
- ``module.to()`` keeps each parameter object when the old and new tensors are of compatible
  kinds (CPU and CUDA); onto meta (or XLA) it makes new ones, and an optimizer built before then
  updates the old tensors: nothing fails, nothing learns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import torch
from torch import nn

from devicelint.findings import Finding, RuntimeContext, Severity
from devicelint.runtime import advice
from devicelint.runtime.tensors import device_name

if TYPE_CHECKING:
    from torch.optim import Optimizer

    from devicelint.runtime.guard import guard

STATE_CODE, STATE_NAME = "DL407", "optimizer-before-move"
GRADIENT_CODE, GRADIENT_NAME = "DL201", "mixed-device-op"


def _placed(optimizer: "Optimizer") -> bool:
    """True when every parameter with a gradient has gradient and state on its device (0-dim CPU
    state exempt outside capturable/fused groups). The per-step fast path: no allocation."""
    state = optimizer.state
    tensor_type = torch.Tensor
    for group in optimizer.param_groups:
        pinned = group.get("capturable") or group.get("fused")
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue  # the optimizer skips it this step
            device = param.device
            if grad.device != device:
                return False
            param_state = state.get(param)  # .get: optimizer.state is a defaultdict
            if param_state:
                for value in param_state.values():
                    if isinstance(value, tensor_type) and value.device != device:
                        if pinned or value.device.type != "cpu" or value.dim() != 0:
                            return False
    return True


class OptimizerChecks:
    """The step pre-hooks of one guard, and what they report."""

    def __init__(self, owner: "guard", optimizers: tuple["Optimizer", ...]) -> None:
        self.owner = owner
        self.optimizers = optimizers
        self._checked_parameters: set[int] = set()

    def install(self) -> list[Any]:
        """Register a step pre-hook on each optimizer; the handles are the guard's to remove."""
        self._checked_parameters.clear()
        return [optimizer.register_step_pre_hook(self.before_step) for optimizer in self.optimizers]

    def before_step(self, optimizer: "Optimizer", args: Any, kwargs: Any) -> None:
        if torch.compiler.is_compiling():
            return None
        if id(optimizer) not in self._checked_parameters:
            self._checked_parameters.add(id(optimizer))
            self._check_parameters_are_the_models(optimizer)
        if not _placed(optimizer):
            self._report_misplaced(optimizer)
        return None

    # ------------------------------------------------------------------ the checks

    def _report_misplaced(self, optimizer: "Optimizer") -> None:
        for group_index, group in enumerate(optimizer.param_groups):
            pinned = bool(group.get("capturable") or group.get("fused"))
            for index, param in enumerate(group["params"]):
                grad = param.grad
                if grad is None:
                    continue
                label = f"param_groups[{group_index}]['params'][{index}]"
                if grad.device != param.device:
                    self._report_tensor(optimizer, param, label, "grad", grad.device, advice.for_gradient())
                for key, value in optimizer.state.get(param, {}).items():
                    if not isinstance(value, torch.Tensor) or value.device == param.device:
                        continue
                    scalar_on_cpu = value.device.type == "cpu" and value.dim() == 0
                    if scalar_on_cpu and not pinned:
                        continue  # a step count kept on the CPU by design
                    self._report_tensor(
                        optimizer, param, label, f"state[{key!r}]", value.device, advice.for_optimizer_state(scalar_on_cpu)
                    )

    def _check_parameters_are_the_models(self, optimizer: "Optimizer") -> None:
        """Parameters of the optimizer that are no guarded module's parameter and sit on a device
        none of those does: left behind when the model's parameters were replaced. (A parameter
        of an unguarded model on the same device, a GAN's other network, is not reported.)"""
        current: set[int] = set()
        devices: set[torch.device] = set()
        for _, module in self.owner.named_modules():
            for parameter in module._parameters.values():
                if parameter is not None:
                    current.add(id(parameter))
                    devices.add(parameter.device)
        if not devices:
            return  # no guarded module has parameters: nothing to compare with
        stale = [
            param
            for group in optimizer.param_groups
            for param in group["params"]
            if param.requires_grad and id(param) not in current and param.device not in devices
        ]
        if not stale:
            return
        optimizer_class = type(optimizer).__name__
        stale_devices = ", ".join(sorted({device_name(param.device) for param in stale}))
        model_devices = ", ".join(sorted(device_name(device) for device in devices))
        message = (
            f"{optimizer_class}.step: {len(stale)} of its parameters (on {stale_devices}) are none of the guarded "
            f"modules' parameters, which are on {model_devices}; {advice.for_stale_parameters()}"
        )
        context = RuntimeContext(
            module_path="",
            module_class="",
            tensor="parameters",
            tensor_device=model_devices,
            argument=f"{optimizer_class} parameters",
            argument_device=stale_devices,
            op=f"{optimizer_class}.step",
        )
        key = ("stale optimizer parameters", optimizer_class, stale_devices, model_devices)
        self._emit(STATE_CODE, STATE_NAME, message, context, key)

    # ------------------------------------------------------------------ reporting

    def _report_tensor(
        self, optimizer: "Optimizer", param: torch.Tensor, label: str, what: str, device: torch.device, remedy: str
    ) -> None:
        optimizer_class = type(optimizer).__name__
        owner = self._owner_of(param)
        if owner is not None:
            module_path, module, attribute = owner
            name = f"{module_path}.{attribute}" if module_path else attribute
            module_class = type(module).__name__
        else:
            module_path, module_class, attribute, name = "", "", label, label
        if what == "grad":
            seen = f"the gradient of parameter `{name}` is on {device_name(device)}"
            code, rule_name = GRADIENT_CODE, GRADIENT_NAME
        else:
            seen = f"{what} of parameter `{name}` is on {device_name(device)}"
            code, rule_name = STATE_CODE, STATE_NAME
        message = f"{optimizer_class}.step: {seen}, the parameter is on {device_name(param.device)}; {remedy}"
        context = RuntimeContext(
            module_path=module_path,
            module_class=module_class,
            tensor=attribute,
            tensor_device=device_name(param.device),
            argument=what,
            argument_device=device_name(device),
            op=f"{optimizer_class}.step",
        )
        key = ("optimizer", optimizer_class, name, what, str(param.device), str(device))
        self._emit(code, rule_name, message, context, key)

    def _owner_of(self, param: torch.Tensor) -> Optional[tuple[str, nn.Module, str]]:
        """(module path, module, attribute) of the guarded module that holds ``param``; done
        only when reporting."""
        for path, module in self.owner.named_modules():
            for attribute, candidate in module._parameters.items():
                if candidate is param:
                    return path, module, attribute
        return None

    def _emit(self, code: str, rule_name: str, message: str, context: RuntimeContext, key: tuple[Any, ...]) -> None:
        from devicelint.runtime.ops import user_frame

        file, line = user_frame() or ("<unknown>", 1)  # the user's `optimizer.step()` line
        finding = Finding(code, rule_name, Severity.ERROR, message, file, line, 1, line, 1, runtime=context)
        self.owner.report(finding, key)
