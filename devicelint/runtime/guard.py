"""``devicelint.guard``: check, at every forward of every submodule of the guarded modules (a
model, its loss, ...), that the module's own parameters and buffers and the tensors it is given
share one device; with ``optimizer=``, check before each step that gradients and optimizer state
sit with their parameters (optimizer_check.py).

Facts this builds on (see shared/RUNTIME.md): per-module forward pre-hooks registered with
``with_kwargs=True`` see keyword arguments; nn.DataParallel replicas share the original's hook
dictionaries, so each hook carries its module's dotted path and reads the tensors of the module
it is called on (a replica keeps them in ``_former_parameters``); wrappers own no tensors and
legitimately receive CPU inputs they scatter, so only modules with tensors of their own are
checked, and per call, which keeps model-parallel models (submodules on different devices) quiet.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from types import TracebackType
from typing import Any, Callable, Iterable, Iterator, Optional, Union

import torch
from torch import nn
from torch.optim import Optimizer

from devicelint.findings import Finding, RuntimeContext, Severity
from devicelint.runtime import advice
from devicelint.runtime.errors import DeviceMismatchError, DeviceMismatchWarning
from devicelint.runtime.tensors import device_name, exempt, exempt_input, first_mismatch, moved_to

MODES = ("raise", "warn", "collect")
_EMPTY: dict[str, Any] = {}
# argument types that hold no tensor
_FLAT = (int, float, bool, str, torch.dtype, torch.device, torch.Size)
CODE, NAME = "DL201", "mixed-device-op"


def _own_tensors(module: nn.Module) -> list[tuple[str, str, torch.Tensor]]:
    """(kind, name, tensor) of the module's direct parameters and buffers, live."""
    parameters = module._parameters or module.__dict__.get("_former_parameters") or {}
    found = [("parameter", name, tensor) for name, tensor in parameters.items() if tensor is not None]
    found.extend(("buffer", name, tensor) for name, tensor in module._buffers.items() if tensor is not None)
    return found


def _has_own_tensors(module: nn.Module) -> bool:
    return any(t is not None for t in module._parameters.values()) or any(t is not None for t in module._buffers.values())


def _optimizers(optimizer: Union[Optimizer, Iterable[Optimizer], None]) -> tuple[Optimizer, ...]:
    if optimizer is None:
        return ()
    found = (optimizer,) if isinstance(optimizer, Optimizer) else tuple(optimizer) if isinstance(optimizer, (list, tuple)) else None
    if found is None or not all(isinstance(item, Optimizer) for item in found):
        raise TypeError(
            f"devicelint.guard's optimizer= needs a torch.optim.Optimizer or a list of them, not {type(optimizer).__name__}"
        )
    return found


class guard:  # noqa: N801 - a context manager named like torch.no_grad
    """Check every forward of the given modules and their submodules for tensors on different
    devices, and with ``optimizer=`` every step for gradients and state away from their parameter.

    ``guard(model, criterion, optimizer=opt)`` guards a whole training step: the modules are a
    model and anything else that runs a forward (a loss with a ``weight``). The first module's
    submodules are named by their dotted path (``encoder.layers.3``, ``<root>`` for the module
    itself); those of the N-th module (counting from 0) by ``[N]`` and their path (``[1]``,
    ``[1].head``). ``optimizer`` is an optimizer or a list of them.

    ``on_mismatch``: "raise" raises :class:`DeviceMismatchError` at the first mismatch, "warn"
    emits a :class:`DeviceMismatchWarning` per distinct mismatch, at the user's line, "collect"
    only records. Every distinct mismatch is in ``.findings``. ``ops=True`` also checks each torch
    operation run inside a guarded forward, and reports it at the user's source line.

    Use as ``with devicelint.guard(model) as g: model(x)``, or call ``__enter__`` / ``__exit__``
    (or ``remove()``) yourself. Everything installed is removed on exit, exception or not.
    """

    def __init__(
        self,
        *modules: nn.Module,
        optimizer: Union[Optimizer, Iterable[Optimizer], None] = None,
        on_mismatch: str = "raise",
        ops: bool = False,
    ) -> None:
        for module in modules:
            if not isinstance(module, nn.Module):
                raise TypeError(f"devicelint.guard needs an nn.Module for each module argument, not {type(module).__name__}")
        optimizers = _optimizers(optimizer)
        if not modules and not optimizers:
            raise TypeError("devicelint.guard needs a module to guard (guard(model)) or an optimizer (optimizer=opt)")
        if on_mismatch not in MODES:
            raise ValueError(f"on_mismatch must be one of {', '.join(map(repr, MODES))}, not {on_mismatch!r}")
        #: the guarded modules, in the order given; ``model`` is the first (None with only an optimizer)
        self.modules = modules
        self.model: Optional[nn.Module] = modules[0] if modules else None
        self.optimizers = optimizers
        self.on_mismatch = on_mismatch
        self.ops = ops
        self.findings: list[Finding] = []
        self._seen: set[tuple[Any, ...]] = set()
        self._handles: list[Any] = []
        self._entered = 0
        self._sources: dict[type, tuple[str, int]] = {}
        self._lock = threading.Lock()
        self._op_state: Optional[Any] = None
        #: simulation only: after recording a mismatch, move the odd tensors and go on, so that
        #: one forward shows every mismatch (on real hardware the forward would stop)
        self.repair = False

    # ------------------------------------------------------------------ install / remove

    def __enter__(self) -> "guard":
        self._entered += 1
        if self._entered > 1:
            return self  # re-entered while active: the hooks are already there
        try:
            if self.ops and self.modules:
                from devicelint.runtime.ops import OpChecks

                self._op_state = OpChecks(self)
                for root in self.modules:
                    self._handles.append(root.register_forward_pre_hook(self._op_state.enter_forward))
                    self._handles.append(root.register_forward_hook(self._op_state.leave_forward, always_call=True))
            for path, module in self.named_modules():
                if _has_own_tensors(module):
                    self._handles.append(module.register_forward_pre_hook(self._make_hook(path), with_kwargs=True))
            if self.optimizers:
                from devicelint.runtime.optimizer_check import OptimizerChecks

                self._handles.extend(OptimizerChecks(self, self.optimizers).install())
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], traceback: Optional[TracebackType]
    ) -> None:
        self._entered -= 1
        if self._entered <= 0:
            self.remove()

    def remove(self) -> None:
        """Remove every hook and mode this guard installed (idempotent)."""
        self._entered = 0
        handles, self._handles = self._handles, []
        for handle in handles:
            handle.remove()
        if self._op_state is not None:
            self._op_state.close()
            self._op_state = None

    @property
    def active(self) -> bool:
        return bool(self._handles)

    def named_modules(self) -> Iterator[tuple[str, nn.Module]]:
        """Every guarded module and submodule with its path: the first module's as
        ``named_modules()`` gives them (a shared submodule under each of its paths), the N-th
        module's prefixed ``[N]``, leaving out any module an earlier one already holds (a loss
        that is also an attribute of the model is checked once)."""
        earlier: set[int] = set()
        for index, root in enumerate(self.modules):
            held = list(root.named_modules(remove_duplicate=False))
            for path, module in held:
                if index == 0:
                    yield path, module
                elif id(module) not in earlier:
                    yield (f"[{index}].{path}" if path else f"[{index}]"), module
            earlier.update(id(module) for _, module in held)

    # ------------------------------------------------------------------ module check

    def _make_hook(self, path: str) -> Callable[..., None]:
        slow_check = self._full_check(path)
        is_compiling = torch.compiler.is_compiling
        disable_torch_function = torch._C.DisableTorchFunction
        tensor_type = torch.Tensor

        def check_module_devices(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if self._op_state is not None and not is_compiling():
                # reading .device inside a guarded forward would go through the op-level mode
                with disable_torch_function():
                    return fast_check(module, args, kwargs)
            return fast_check(module, args, kwargs)

        def fast_check(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            if is_compiling():
                return None  # Dynamo checks devices itself, and Python state in a hook breaks it
            state = module.__dict__
            if "_hf_hook" in state:
                return None  # accelerate moves this module's weights in a hook that runs after ours
            # fast path, no allocation: one device among own tensors and flat tensor inputs
            expected = None
            for tensor in (state["_parameters"] or state.get("_former_parameters") or _EMPTY).values():
                if tensor is not None:
                    if expected is None:
                        expected = tensor.device
                    elif tensor.device != expected:
                        return slow_check(module, args, kwargs)
            for tensor in state["_buffers"].values():
                if tensor is not None:
                    if expected is None:
                        expected = tensor.device
                    elif tensor.device != expected:
                        return slow_check(module, args, kwargs)
            if expected is None:
                return None
            for value in args:
                if isinstance(value, tensor_type):
                    if value.device != expected:
                        return slow_check(module, args, kwargs)
                elif value is not None and not isinstance(value, _FLAT):
                    return slow_check(module, args, kwargs)
            if kwargs:
                return slow_check(module, args, kwargs)
            return None

        return check_module_devices

    def _full_check(self, path: str) -> Callable[..., Any]:
        """The complete check, run when the fast path sees anything unusual: finds the first
        disagreeing tensor, reports it, and (simulation only) repairs the inputs."""
        report = self._module_mismatch

        def check(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
            own = _own_tensors(module)
            if not own:
                return None
            kind, name, reference = own[0]
            expected = reference.device
            for other_kind, other_name, tensor in own[1:]:
                if tensor.device != expected and not exempt(tensor):
                    report(module, path, f"{kind} `{name}`", expected, f"{other_kind} `{other_name}`", tensor.device, None)
                    return None  # the module's own tensors disagree: no input can be right
            found = None
            for index, value in enumerate(args):
                if isinstance(value, torch.Tensor):
                    if value.device != expected and not exempt_input(value, module):
                        found = (f"args[{index}]", value)
                        break
                elif value is not None and not isinstance(value, (int, float, bool, str)):
                    found = first_mismatch(value, expected, f"args[{index}]", module=module)
                    if found is not None:
                        break
            if found is None and kwargs:
                found = first_mismatch(kwargs, expected, "kwargs", module=module)
            if found is None:
                return None
            report(module, path, f"{kind} `{name}`", expected, f"input `{found[0]}`", found[1].device, found[1])
            return moved_to(expected, args, kwargs, module=module) if self.repair else None

        return check

    def _module_mismatch(
        self,
        module: nn.Module,
        path: str,
        own: str,
        own_device: torch.device,
        other: str,
        other_device: torch.device,
        odd_input: Optional[torch.Tensor],
    ) -> None:
        """Report what the module check saw, and what to do: ``odd_input`` is the input that
        is not with the module's tensors, None when the module's own tensors disagree."""
        label = path or "<root>"
        class_name = type(module).__name__
        own_name = own.partition(" ")[2]
        other_name = other.partition(" ")[2]
        if odd_input is None:
            remedy = advice.for_module_tensors()
        else:
            holder = advice.plain_tensor_attribute(self.named_modules(), odd_input)
            remedy = advice.for_module_input(module, own_name.strip("`"), own_device, other_device, holder)
        message = (
            f"{label} ({class_name}): {other} is on {device_name(other_device)}, "
            f"{own} is on {device_name(own_device)}; {remedy}"
        )
        # the user's line that called the module; where a forward is called from torch alone
        # (a hook, a wrapper), the module's own forward
        from devicelint.runtime.ops import user_frame

        file, line = user_frame() or self._source_of(type(module))
        context = RuntimeContext(
            module_path=path,
            module_class=class_name,
            tensor=own_name.strip("`"),
            tensor_device=device_name(own_device),
            argument=other_name.strip("`"),
            argument_device=device_name(other_device),
        )
        key = (path, class_name, own, str(own_device), other, str(other_device))
        self.report(Finding(CODE, NAME, Severity.ERROR, message, file, line, 1, line, 1, runtime=context), key)

    def _source_of(self, cls: type) -> tuple[str, int]:
        """Where the class's forward is defined (the place a user goes to fix it)."""
        if cls not in self._sources:
            try:
                forward = inspect.unwrap(cls.forward)  # type: ignore[attr-defined]
                file = inspect.getsourcefile(forward) or "<unknown>"
                line = inspect.getsourcelines(forward)[1]
            except (TypeError, OSError, AttributeError):
                file, line = "<unknown>", 1
            self._sources[cls] = (file, line)
        return self._sources[cls]

    # ------------------------------------------------------------------ reporting

    def report(self, finding: Finding, key: tuple[Any, ...]) -> None:
        """Record a finding once per distinct key, then raise or warn as configured."""
        with self._lock:
            new = key not in self._seen
            if new:
                self._seen.add(key)
                self.findings.append(finding)
        if self.on_mismatch == "raise":
            raise DeviceMismatchError(finding.message, finding)
        if new and self.on_mismatch == "warn":
            # at the user's line the finding names, not at this one (a stacklevel cannot say
            # how many torch and devicelint frames lie between)
            warnings.warn_explicit(DeviceMismatchWarning(finding.message), DeviceMismatchWarning, finding.path, finding.line)
