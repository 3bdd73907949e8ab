"""The simulation itself, inside the simulation process: set up (objects unpickled, or a factory
called on the simulated GPU), place, then run forward, loss, backward and optimizer step under
the guard, and say how far it got.

Facts (torch 2.13, CPU build, checked while writing this; a CUDA build, which sees no GPU in
the simulation process, behaves the same with the shim):
- with the fake CUDA shim loaded, forward with gradients, backward and ``optimizer.step()`` run
  on fake CUDA tensors, across several fake devices too;
- with no device guard at all, an operation on fake CUDA tensors that records autograd history
  takes the interpreter down (``std::terminate``: autograd's ``InputMetadata`` asks for the CUDA
  guard where no exception may leave), which is what RUNTIME.md saw; with the guard but not the
  CUDA hooks, backward stops with "Cannot access accelerator device when none is available".
  So without the shim a training step is not attempted: the forward runs without gradients,
  and the result says the rest was not simulated;
- autograd runs a backward on one thread per device; fake tensors keep their kernel bookkeeping
  per fake mode, not per thread, and two threads at once break it (an ``AssertionError`` in
  ``in_kernel_invocation_manager``), so the backward runs on the calling thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import traceback
from typing import Any, Callable, Optional

import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import devicelint
from devicelint.findings import Finding, RuntimeContext, Severity
from devicelint.runtime.errors import SimulationError
from devicelint.runtime.guard import guard
from devicelint.runtime.simulate import Simulation, as_simulation
from devicelint.runtime.simulate.execution import SimulatedRun, register_meta_kernels, transformers_without_mask_values
from devicelint.runtime.simulate.fake_cuda import ShimStatus
from devicelint.runtime.simulate.placement import FactoryPlacement, move_model, on_the_cpu, place, remap_optimizer

# what stock fake tensors say about an operation that needs the CUDA device guard
_UNSUPPORTED = "not linked with support for cuda"
_FOREIGN_DIRECTORIES = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep for module in (torch, devicelint) if module.__file__
)


@dataclasses.dataclass
class Stop:
    """Where and why a run ended early (the fields of SimulationResult of the same names)."""

    stage: str
    reason: str
    op: Optional[str]
    where: Optional[str]


class loss_fn(nn.Module):  # noqa: N801 - reports name this class ("in loss_fn.forward"), as the argument
    """Calls the loss inside a forward of its own, so that the guard checks it: op by op, and, for
    a loss that is a module (a ``CrossEntropyLoss`` with a ``weight``), its tensors against its
    inputs, reported under the name ``loss_fn``."""

    def __init__(self, function: Callable[..., Any], with_target: bool) -> None:
        super().__init__()
        self.loss_fn = function  # a module becomes the submodule `loss_fn`, a function stays a function
        self.with_target = with_target

    def forward(self, output: Any, target: Any = None) -> Any:
        return self.loss_fn(output, target) if self.with_target else self.loss_fn(output)


def _user_location(trace: Any) -> Optional[tuple[str, int]]:
    """The innermost frame of a traceback in the user's code (not torch's, not devicelint's)."""
    found = None
    for frame, line in traceback.walk_tb(trace):
        filename = frame.f_code.co_filename
        if not filename.startswith(_FOREIGN_DIRECTORIES) and not filename.startswith("<frozen"):
            found = (filename, line)
    return found


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else text


def _hint(error: BaseException, shim: ShimStatus) -> str:
    """What an exception means for a simulation, where the exception alone does not say."""
    name = type(error).__name__
    message = str(error)
    if name in ("DataDependentOutputException", "GuardOnDataDependentSymNode") or "_local_scalar_dense" in message:
        return (
            "the code reads a value of a tensor on the simulated GPU (`.item()`, `.tolist()`, `if tensor:`, "
            "printing it), and fake tensors have no values"
        )
    if name == "DynamicOutputShapeException":
        return "the output's shape depends on values, which fake tensors do not have"
    if "Cannot access accelerator device" in message or _UNSUPPORTED in message:
        return f"this needs devicelint's fake CUDA shim, which is not loaded: {shim.problem}"
    if name == "NotImplementedError" and ("Meta tensors" in message or "fake impl" in message):
        return "PyTorch has no fake (meta) kernel for this operation, so it cannot run on fake tensors"
    if "Torch not compiled with CUDA enabled" in message or "without ATen_cuda library" in message:
        functions = {frame.f_code.co_name for frame, _ in traceback.walk_tb(error.__traceback__)}
        if "run_fallback_kernel" in functions:
            return "PyTorch has no fake (meta) kernel for this operation, and its fallback needs a real GPU"
        return "the code uses the CUDA runtime (`torch.cuda.*`, a CUDA generator), which the simulation does not have"
    return ""


def _device_mismatch(error: BaseException) -> bool:
    message = str(error)
    return (
        type(error).__name__ == "FakeTensorDeviceMismatchError"
        or "Expected all tensors to be on the same device" in message
        or "'lengths' argument should be a 1D CPU int64 tensor" in message
    )


def _place_name(location: Optional[tuple[str, int]]) -> Optional[str]:
    return f"{location[0]}:{location[1]}" if location is not None else None


def _setup_location(factory: Any) -> Optional[tuple[str, int]]:
    code = getattr(factory, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else None


class Runner:
    """One simulation: what it found, what it could not simulate, and where it stopped."""

    def __init__(self, device: str, caller: Optional[tuple[str, int]], shim: ShimStatus) -> None:
        self.device = device
        self.setup_location = caller
        self.shim = shim
        self.notes: list[str] = []
        self.findings: list[Finding] = []
        self.stop: Optional[Stop] = None
        self.fake_mode = FakeTensorMode(
            allow_non_fake_inputs=True,
            # symbolic sizes only where values decide a shape (boolean masks, nonzero, unique)
            shape_env=ShapeEnv(allow_dynamic_output_shape_ops=True),
            static_shapes=True,
        )
        self._kernels = register_meta_kernels()

    # ------------------------------------------------------------------ setting up

    def setup(self, payload: tuple[Any, ...]) -> tuple[Simulation, dict[int, nn.Parameter]]:
        """The plan, and the parameters a factory's own moves replaced."""
        if payload[0] == "objects":
            return payload[1], {}
        placement = FactoryPlacement(self.fake_mode)
        if payload[0] == "import":
            _, module_name, factory_name = payload
            label = f"{module_name}:{factory_name}"
            try:
                with placement:
                    factory = getattr(importlib.import_module(module_name), factory_name)
            except (ImportError, AttributeError) as error:
                raise SimulationError(f"cannot import {label}: {error}") from None
        else:
            factory = payload[1]
            label = getattr(factory, "__qualname__", repr(factory))
        self.setup_location = _setup_location(factory) or self.setup_location
        try:
            with placement:
                made = factory()
        except Exception as error:  # noqa: BLE001 - the factory is user code
            where = _place_name(_user_location(error.__traceback__))
            raise SimulationError(
                f"{label}() failed{f' at {where}' if where else ''}: {type(error).__name__}: {_first_line(str(error))}"
            ) from None
        plan = as_simulation(made, f"{label}()")
        replaced = placement.replaced_parameters(plan.model) if isinstance(plan.model, nn.Module) else {}
        return plan, replaced

    def place(self, plan: Simulation, replaced: dict[int, nn.Parameter]) -> tuple[tuple[Any, ...], dict[str, Any], Any]:
        if not isinstance(plan.model, nn.Module):
            raise SimulationError(f"the model must be an nn.Module, not {type(plan.model).__name__}")
        if plan.optimizer is not None and not isinstance(plan.optimizer, torch.optim.Optimizer):
            raise SimulationError(f"the optimizer must be a torch.optim.Optimizer, not {type(plan.optimizer).__name__}")
        if plan.loss_fn is not None and not callable(plan.loss_fn):
            raise SimulationError(f"loss_fn must be callable, not {type(plan.loss_fn).__name__}")
        try:
            with torch.no_grad(), self.fake_mode:
                if on_the_cpu(plan.model):
                    replaced = {**replaced, **move_model(plan.model, self.device)}
                args, kwargs, target = place((plan.inputs, plan.kwargs, plan.target), self.device)
        except RuntimeError as error:
            raise SimulationError(f"cannot place the model and inputs on fake {self.device}: {_first_line(str(error))}") from None
        if plan.optimizer is not None:
            remap_optimizer(plan.optimizer, replaced)
        return tuple(args), dict(kwargs), target

    # ------------------------------------------------------------------ the steps

    def run(self, plan: Simulation, args: tuple[Any, ...], kwargs: dict[str, Any], target: Any) -> None:
        # without the shim, autograd on fake CUDA aborts (a CPU build) or stops (a CUDA build,
        # which sees no GPU here): see the module's docstring and fake_cuda.py
        training = plan.training_step and self.shim.loaded
        model_guard = guard(plan.model, optimizer=plan.optimizer if training else None, on_mismatch="collect", ops=True)
        model_guard.repair = True
        guards = [model_guard]
        loss_call = None
        if plan.loss_fn is not None and training:
            loss_call = loss_fn(plan.loss_fn, with_target=plan.target is not None)
            loss_guard = guard(loss_call, on_mismatch="collect", ops=True)
            loss_guard.repair = True
            guards.append(loss_guard)
        run = SimulatedRun()
        stage = "forward"
        try:
            with contextlib.ExitStack() as stack:
                stack.enter_context(self.fake_mode)
                stack.enter_context(run)
                stack.enter_context(transformers_without_mask_values())
                stack.enter_context(torch.enable_grad() if training else torch.no_grad())
                # backward on this thread, not on the engine's threads per device (see above)
                stack.enter_context(torch.autograd.set_multithreading_enabled(False))
                for checker in guards:
                    stack.enter_context(checker)
                if training and plan.optimizer is not None:
                    # after the guard's own hook has reported them, put misplaced gradients and
                    # state with their parameters, so that the step goes on (as the guard's
                    # repair does for a forward's inputs)
                    stack.enter_context(plan.optimizer.register_step_pre_hook(_move_state_to_parameters))
                output = self._forward(plan.model, args, kwargs)
                if plan.training_step and not training:
                    self.stop = Stop(
                        "backward",
                        f"the training step (loss, backward, optimizer step) needs devicelint's fake CUDA shim, "
                        f"which is not loaded: {self.shim.problem}; only the forward was simulated",
                        None,
                        None,
                    )
                    return
                if not training:
                    return
                stage = "loss"
                loss = loss_call(output, target) if loss_call is not None else _loss_of(output)
                stage = "backward"
                loss.backward()
                if plan.optimizer is not None:
                    stage = "optimizer step"
                    plan.optimizer.step()
        except Exception as error:  # noqa: BLE001 - whatever stopped the user's code is the reason
            self._stopped(stage, error, run)
        finally:
            for checker in guards:
                self.findings.extend(checker.findings)

    def _forward(self, model: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return model(*args, **kwargs)
        except RuntimeError as error:
            if _UNSUPPORTED not in str(error) or not model.training:
                raise
            # stock fake tensors (no shim) cannot run train-mode BatchNorm and the like on CUDA;
            # eval mode can, with the same devices
            self.notes.append(f"{_first_line(str(error))} (in train mode; simulated again in eval mode)")
            model.eval()
            return model(*args, **kwargs)

    def _stopped(self, stage: str, error: BaseException, run: SimulatedRun) -> None:
        op = run.failed_op(error)
        location = _user_location(error.__traceback__)
        message = _first_line(str(error)) or type(error).__name__
        hint = _hint(error, self.shim)
        seen = f"{type(error).__name__}: {message}"
        reason = f"{hint} ({seen})" if hint else seen
        self.stop = Stop(stage, reason, op, _place_name(location))
        if _device_mismatch(error):
            # PyTorch itself stopped on mixed devices somewhere the guard does not look (inside
            # a kernel, in backward): that is a finding too
            path, line = location or self.setup_location or ("<unknown>", 1)
            context = RuntimeContext(module_path="", module_class="", op=op)
            text = f"`{op or stage}` stops the {stage} on mixed devices: {message}"
            self.findings.append(Finding("DL201", "mixed-device-op", Severity.ERROR, text, path, line, 1, line, 1, runtime=context))

    # ------------------------------------------------------------------ the answer

    def answer(self) -> dict[str, Any]:
        notes = list(self.notes)
        if self.shim.problem is not None and (notes or self.stop is not None):
            notes.insert(0, f"{self.shim.problem}; stock fake tensors were used")
        return {
            "findings": [self._relocated(finding) for finding in self.findings],
            "unsupported": notes,
            "stop": dataclasses.asdict(self.stop) if self.stop is not None else None,
        }

    def _relocated(self, finding: Finding) -> Finding:
        """A finding the guard could only place in torch's or devicelint's code (a torch loss's
        unmoved weight, optimizer state) goes to the line that set the simulation up: the
        ``simulate(...)`` call, or the factory."""
        foreign = finding.path == "<unknown>" or finding.path.startswith(_FOREIGN_DIRECTORIES)
        if not foreign or self.setup_location is None:
            return finding
        path, line = self.setup_location
        return dataclasses.replace(finding, path=path, line=line, end_line=line)


def _loss_of(output: Any) -> torch.Tensor:
    """Without a loss_fn the model computes its loss: the output, or its ``loss``."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, dict) and "loss" in output:
        return output["loss"]
    loss = getattr(output, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    raise SimulationError(
        f"no loss to run backward on: the model returned {type(output).__name__}; give loss_fn= (and target=)"
    )


def _move_state_to_parameters(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
    for group in optimizer.param_groups:
        pinned = group.get("capturable") or group.get("fused")
        for parameter in group["params"]:
            if parameter.grad is not None and parameter.grad.device != parameter.device:
                parameter.grad = parameter.grad.to(parameter.device)
            state = optimizer.state.get(parameter) or {}
            for key, value in state.items():
                if not isinstance(value, torch.Tensor) or value.device == parameter.device:
                    continue
                if value.dim() == 0 and value.device.type == "cpu" and not pinned:
                    continue  # a step count the optimizer keeps on the CPU by design
                state[key] = value.to(parameter.device)


def simulate_request(payload: tuple[Any, ...], device: str, caller: Optional[tuple[str, int]], shim: ShimStatus) -> dict[str, Any]:
    """Everything the simulation process does once the request is read."""
    runner = Runner(device, caller, shim)
    plan, replaced = runner.setup(payload)
    args, kwargs, target = runner.place(plan, replaced)
    runner.run(plan, args, kwargs, target)
    return runner.answer()
