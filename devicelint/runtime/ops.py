"""Op-level checks for ``guard(..., ops=True)``.

A ``TorchFunctionMode`` sees every torch call with its arguments, which catches what module
hooks cannot: a ``torch.zeros(n)`` made inside ``forward`` and combined with a GPU input, or a
tensor attribute that was never registered. The mode is pushed when the guarded model's forward
starts and popped when it ends (also on an exception), per thread: torch's mode stack is
thread-local, and DataParallel runs replicas in threads of their own.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.weak import WeakIdKeyDictionary

from devicelint.findings import Finding, RuntimeContext, Severity
from devicelint.runtime.tensors import device_name, first_mismatch, first_tensor, moved_to

if TYPE_CHECKING:
    from devicelint.runtime.guard import guard

# Operations that take tensors from two devices on purpose: moves and copies, indexing with
# CPU indices, setting ``.data``, packed-sequence plumbing, attribute access.
_CROSS_DEVICE_OPS = frozenset(
    {
        "to", "cpu", "cuda", "copy_", "set_", "__get__", "__set__", "__getitem__", "__setitem__",
        "index_put", "index_put_", "_index_put_impl_", "_pack_padded_sequence", "_pad_packed_sequence",
        "pack_padded_sequence", "pad_packed_sequence", "_has_compatible_shallow_copy_type",
        "new_tensor", "new_empty", "new_zeros", "new_ones", "new_full", "type_as", "__repr__",
        "__format__", "__reduce_ex__", "__deepcopy__", "__torch_function__",
    }
)
# Factories that put their result on the default device (the CPU) unless given ``device=``.
_FACTORIES = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
        "logspace", "eye", "tensor", "as_tensor", "from_numpy", "range", "normal", "bernoulli_", "empty_strided",
    }
)
# argument types that hold no tensor
_FLAT = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.Size, torch.layout, torch.memory_format)
_SKIPPED_DIRECTORIES = tuple(
    os.path.dirname(module.__file__) + os.sep
    for module in (torch, sys.modules["devicelint"])
    if getattr(module, "__file__", None)
)


def user_frame() -> Optional[tuple[str, int]]:
    """The innermost frame outside torch and devicelint: the user's line that ran the op."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_SKIPPED_DIRECTORIES) and not filename.startswith("<frozen"):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def op_label(func: Any) -> str:
    name = getattr(func, "__name__", repr(func))
    module = getattr(func, "__module__", None)
    if module is None or not module.startswith("torch"):
        return f"Tensor.{name}"
    if module.startswith("torch._C._nn") or module.startswith("torch.nn.functional"):
        return f"torch.nn.functional.{name}"
    return f"torch.{name}"


class _Mode(TorchFunctionMode):
    def __init__(self, checks: "OpChecks") -> None:
        super().__init__()
        self.checks = checks

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in _FACTORIES and kwargs.get("device") is None:
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor):
                self.checks.record_factory(result, func)
            return result
        if name not in _CROSS_DEVICE_OPS:
            expected = self.checks.check(func, args, kwargs)
            if expected is not None and self.checks.owner.repair:
                args, kwargs = moved_to(expected, args, kwargs)
        return func(*args, **kwargs)


class OpChecks:
    """The op-level half of one guard: its mode, per-thread nesting, and factory origins."""

    def __init__(self, owner: "guard") -> None:
        self.owner = owner
        self._local = threading.local()
        self._origins: WeakIdKeyDictionary = WeakIdKeyDictionary()

    # forward hooks on the guarded model push and pop the mode around its forward
    def enter_forward(self, module: Any, args: Any) -> None:
        if torch.compiler.is_compiling():
            return
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            mode = _Mode(self)
            mode.__enter__()
            self._local.mode = mode
        self._local.depth = depth + 1

    def leave_forward(self, module: Any, args: Any, output: Any) -> None:
        if torch.compiler.is_compiling():
            return
        depth = getattr(self._local, "depth", 0) - 1
        self._local.depth = max(depth, 0)
        if depth == 0:
            mode, self._local.mode = self._local.mode, None
            mode.__exit__(None, None, None)

    def close(self) -> None:
        """Pop a mode that is still pushed on this thread (a forward interrupted before its end hook)."""
        mode = getattr(self._local, "mode", None)
        if mode is not None:
            self._local.mode = None
            self._local.depth = 0
            mode.__exit__(None, None, None)

    def record_factory(self, tensor: torch.Tensor, func: Any) -> None:
        where = user_frame()
        if where is not None:
            self._origins[tensor] = (op_label(func), where)

    def check(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[torch.device]:
        """Report a mismatch among the op's tensors; the device the others should be on, or None."""
        # fast path, no allocation: flat tensors and scalars, the shape of almost every op's
        # arguments; anything else (a mismatch, a list of tensors) goes the long way round
        expected: Optional[torch.device] = None
        for values in (args, kwargs.values() if kwargs else ()):
            for value in values:
                if isinstance(value, torch.Tensor):
                    device = value.device
                    if expected is None:
                        if device.type != "cpu" or value.dim() != 0:
                            expected = device
                    elif device != expected and (device.type != "cpu" or value.dim() != 0):
                        return self._full_check(func, args, kwargs)
                elif not isinstance(value, _FLAT):
                    return self._full_check(func, args, kwargs)
        return None

    def _full_check(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Optional[torch.device]:
        first = first_tensor(args, "args") or (first_tensor(kwargs, "kwargs") if kwargs else None)
        if first is None:
            return None
        first_path, first_value = first
        expected = first_value.device
        odd = first_mismatch(args, expected, "args") or (first_mismatch(kwargs, expected, "kwargs") if kwargs else None)
        if odd is None:
            return None
        self._report(func, first_path, expected, odd[0], odd[1])
        return expected

    def enclosing_module(self) -> tuple[str, str]:
        """The path and class of the innermost submodule of the guarded model whose code is on
        the stack: the module whose forward (or helper method) ran the op. Walks the frames,
        so it is done only when a mismatch is reported."""
        model = self.owner.model
        paths = {id(module): path for path, module in model.named_modules()}
        frame = sys._getframe(1)
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if candidate is not None and id(candidate) in paths:
                return paths[id(candidate)], type(candidate).__name__
            frame = frame.f_back
        return "", type(model).__name__

    def _report(self, func: Any, first_path: str, first_device: torch.device, odd_path: str, odd: torch.Tensor) -> None:
        label = op_label(func)
        where = user_frame() or ("<unknown>", 1)
        module_path, module_class = self.enclosing_module()
        inside = f"`{module_path}` ({module_class})" if module_path else f"{module_class}.forward"
        origin = self._origins.get(odd)
        created = ""
        created_by = None
        if origin is not None:
            factory, (file, line) = origin
            created_by = f"{factory} at {os.path.basename(file)}:{line}"
            created = f" (created without device= by {created_by})"
        message = (
            f"`{label}` in {inside} mixes devices: `{odd_path}` is on {device_name(odd.device)}{created}, "
            f"`{first_path}` is on {device_name(first_device)}"
        )
        context = RuntimeContext(
            module_path=module_path,
            module_class=module_class,
            tensor=first_path,
            tensor_device=device_name(first_device),
            argument=odd_path,
            argument_device=device_name(odd.device),
            op=label,
            created_by=created_by,
        )
        file, line = where
        finding = Finding("DL201", "mixed-device-op", Severity.ERROR, message, file, line, 1, line, 1, runtime=context)
        self.owner.report(finding, (label, file, line, first_path, str(first_device), odd_path, str(odd.device)))
