"""Op-level checks for ``guard(..., ops=True)``.

A ``TorchFunctionMode`` sees every torch call with its arguments, which catches what module
hooks cannot: a ``torch.zeros(n)`` made inside ``forward`` and combined with a GPU input, or a
tensor attribute that was never registered. The mode is pushed when a guarded module's forward
starts and popped when it ends (also on an exception), per thread: torch's mode stack is
thread-local, and DataParallel runs replicas in threads of their own.

What is checked is what PyTorch rejects: the tensors of an operation share one device, except
0-dim CPU tensors (scalars), the operations in ``_CROSS_DEVICE_OPS`` (moves, copies, index
assignment, ``ctc_loss``), a packed sequence's CPU ``batch_sizes`` in the recurrent kernels, and
indexing, which has a rule of its own: ``table[index]`` reads indices from the CPU or from the
table's device (ATen's ``check_indices_on_cpu_or_selfdevice``), and a 0-dim integer or bool
index is read as a number whatever its device. ``meta`` and fake devices stand for an
accelerator: anything that is not the CPU is checked the same way.

Which tensor is blamed. When an operation's tensors sit on more than one device, one device is
taken as where they belong (the reference) and the first tensor elsewhere is reported:

1. the device of the parameters and buffers of the guarded submodule whose code ran the op
   (its own, else the first below it), when one of the op's tensors is there: the model was
   placed on purpose, so what disagrees with it is what was forgotten;
2. otherwise the device most of the op's tensors are on;
3. on a tie, a device other than the CPU: a tensor left on the CPU is the usual mistake;
4. otherwise the first tensor's device.

Where a tensor came from. The result of a device-less factory (``torch.arange(n)``) is
remembered with the user's line, and so is whatever is computed from such tensors alone
(``torch.arange(n).float()[None]``, ``mask * 2``) while it stays on the factory's device, so a
report can say "created without device= by torch.arange at model.py:7". The per-op cost of that
is one truth test of a dict while no such tensor is alive, a lookup per tensor argument while
one is.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from collections import Counter
from itertools import chain
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence
from torch.overrides import TorchFunctionMode

from devicelint.findings import Finding, RuntimeContext, Severity
from devicelint.runtime import advice
from devicelint.runtime.tensors import device_name, host_indices, iter_tensors

if TYPE_CHECKING:
    from devicelint.runtime.guard import guard

# Operations that take tensors from two devices on purpose: moves and copies, index assignment
# (``index_put_`` moves the indices to the tensor's device), setting ``.data``, packed-sequence
# plumbing (lengths live on the CPU), attribute access, and ``ctc_loss``, which moves its targets
# to the log-probabilities' device and reads its lengths on the CPU (ATen's LossCTC.cpp).
_CROSS_DEVICE_OPS = frozenset(
    {
        "to", "cpu", "cuda", "copy_", "set_", "__get__", "__set__", "__setitem__",
        "index_put", "index_put_", "_index_put_impl_", "_pack_padded_sequence", "_pad_packed_sequence",
        "pack_padded_sequence", "pad_packed_sequence", "_has_compatible_shallow_copy_type",
        "new_tensor", "new_empty", "new_zeros", "new_ones", "new_full", "type_as", "__repr__",
        "__format__", "__reduce_ex__", "__deepcopy__", "__torch_function__", "ctc_loss",
    }
)
# Factories that put their result on the default device (the CPU) unless given ``device=``.
_FACTORIES = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
        "logspace", "eye", "tensor", "as_tensor", "from_numpy", "range", "normal", "empty_strided",
        "scalar_tensor", "tril_indices", "triu_indices",
    }
)
# recurrent kernels: given a packed sequence, their second argument is its batch_sizes, on the
# CPU by design
_PACKED_RNN_KERNELS = frozenset({"lstm", "gru", "rnn_tanh", "rnn_relu"})
_INDEXING = "__getitem__"
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


def _place(file: str, line: int) -> str:
    return f"{os.path.basename(file)}:{line}"


class Origin(NamedTuple):
    """Where a device-less factory made a tensor; ``derived``: the tensor was computed from that
    factory's result (a view, a cast, arithmetic among such tensors), not the result itself."""

    factory: str
    file: str
    line: int
    derived: bool = False

    @property
    def created_by(self) -> str:
        return f"{self.factory} at {_place(self.file, self.line)}"

    def describe(self) -> str:
        if self.derived:
            return f"computed from a tensor created without device= by {self.created_by}"
        return f"created without device= by {self.created_by}"


class FactoryOrigins:
    """The origins of live factory-made tensors, by tensor identity; an entry leaves with its
    tensor. ``entries`` is read directly on the hot path: empty means no such tensor is alive."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple["weakref.ref[torch.Tensor]", Origin]] = {}

    def add(self, tensor: torch.Tensor, origin: Origin) -> None:
        key = id(tensor)
        entries = self.entries

        def forget(reference: "weakref.ref[torch.Tensor]") -> None:
            entry = entries.get(key)
            if entry is not None and entry[0] is reference:
                entries.pop(key, None)

        try:
            reference = weakref.ref(tensor, forget)
        except TypeError:  # a tensor subclass without weak references: its origin goes untold
            return
        entries[key] = (reference, origin)

    def get(self, tensor: torch.Tensor) -> Optional[Origin]:
        entry = self.entries.get(id(tensor))
        if entry is not None and entry[0]() is tensor:
            return entry[1]
        return None


def _readable_index(index: torch.Tensor, device: torch.device) -> bool:
    """Whether ``tensor[index]`` may read ``index`` for a tensor on ``device``: indices on the CPU
    or on the tensor's device; a 0-dim integer or bool index is read with ``.item()`` (any other
    0-dim index is refused for its dtype, not its device)."""
    index_device = index.device
    return index_device == device or index_device.type == "cpu" or index.dim() == 0


def _module_device(module: Optional[nn.Module]) -> Optional[torch.device]:
    """The device of a module's own parameters and buffers, else of the first one below it."""
    if module is None:
        return None
    own = chain(
        (module._parameters or module.__dict__.get("_former_parameters") or {}).values(), module._buffers.values()
    )
    for tensor in chain(own, module.parameters(), module.buffers()):
        if tensor is not None:
            return tensor.device
    return None


def reference_device(devices: list[torch.device], module_device: Optional[torch.device]) -> torch.device:
    """Where an op's tensors belong (the module docstring's rules 1-4); ``devices`` in argument
    order, one per tensor."""
    if module_device is not None and module_device in devices:
        return module_device
    counts = Counter(devices)  # keeps first-appearance order
    most = max(counts.values())
    leaders = [device for device, count in counts.items() if count == most]
    return next((device for device in leaders if device.type != "cpu"), leaders[0])


class _Mode(TorchFunctionMode):
    def __init__(self, checks: "OpChecks") -> None:
        super().__init__()
        self.checks = checks
        self.live_origins = checks.origins.entries

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Optional[dict[str, Any]] = None) -> Any:
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        checks = self.checks
        if name in _FACTORIES and kwargs.get("device") is None and not any(isinstance(a, torch.Tensor) for a in args):
            result = func(*args, **kwargs)
            if isinstance(result, torch.Tensor):
                checks.record_factory(result, func)
            return result
        if name not in _CROSS_DEVICE_OPS:
            repaired = checks.check(func, name, args, kwargs)
            if repaired is not None:
                args, kwargs = repaired
        result = func(*args, **kwargs)
        if self.live_origins:
            checks.inherit_origin(result, args, kwargs)
        return result


class OpChecks:
    """The op-level half of one guard: its mode, per-thread nesting, and factory origins."""

    def __init__(self, owner: "guard") -> None:
        self.owner = owner
        self._local = threading.local()
        self.origins = FactoryOrigins()

    # forward hooks on the guarded modules push and pop the mode around their forward
    def enter_forward(self, module: Any, args: Any) -> None:
        if torch.compiler.is_compiling():
            return
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            # who called the model: a library model's ops are reported at the library's lines
            self._local.called_from = user_frame()
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

    # ------------------------------------------------------------------ origins

    def record_factory(self, tensor: torch.Tensor, func: Any) -> None:
        where = user_frame()
        if where is not None:
            self.origins.add(tensor, Origin(op_label(func), where[0], where[1]))

    def inherit_origin(self, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Give ``result`` the origin of its inputs when every tensor among them (scalars aside)
        came from a device-less factory and the result stayed on that factory's device. Runs
        for every op while a factory-made tensor is alive: the usual input, a tensor of no
        recorded origin, is rejected after one dict lookup."""
        if not isinstance(result, torch.Tensor):
            return
        entries = self.origins.entries
        source: Optional[torch.Tensor] = None
        for value in chain(args, kwargs.values()) if kwargs else args:
            if isinstance(value, torch.Tensor):
                candidates: Any = (value,)
            elif isinstance(value, (list, tuple)):
                candidates = value
            else:
                continue
            for tensor in candidates:
                if not isinstance(tensor, torch.Tensor):
                    continue
                entry = entries.get(id(tensor))
                if entry is None or entry[0]() is not tensor:
                    if tensor.dim() == 0 and tensor.device.type == "cpu":
                        continue  # a scalar: it does not make the result anyone else's
                    return  # computed with a tensor of another origin
                if source is None:
                    source = tensor
        if source is None or self.origins.get(result) is not None or result.device != source.device:
            return
        origin = self.origins.get(source)
        if origin is not None:
            self.origins.add(result, origin._replace(derived=True))

    # ------------------------------------------------------------------ checks

    def check(
        self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Optional[tuple[tuple[Any, ...], dict[str, Any]]]:
        """Report a mismatch among the op's tensors. Returns None, or, in a simulation that
        repairs, the arguments with the odd tensors moved where they belong."""
        if name == _INDEXING:
            return self._check_indexing(func, args, kwargs)
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
                        return self._full_check(func, name, args, kwargs)
                elif not isinstance(value, _FLAT):
                    return self._full_check(func, name, args, kwargs)
        return None

    def _full_check(
        self, func: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Optional[tuple[tuple[Any, ...], dict[str, Any]]]:
        tensors = list(iter_tensors(args, "args"))
        if kwargs:
            tensors.extend(iter_tensors(kwargs, "kwargs"))
        batch_sizes = args[1] if name in _PACKED_RNN_KERNELS and len(args) > 1 else None
        if isinstance(batch_sizes, torch.Tensor) and host_indices(batch_sizes):
            tensors = [(path, tensor) for path, tensor in tensors if tensor is not batch_sizes]
        if len({tensor.device for _, tensor in tensors}) < 2:
            return None
        return self._judge(func, tensors, args, kwargs, indexing=False)

    def _check_indexing(
        self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Optional[tuple[tuple[Any, ...], dict[str, Any]]]:
        if len(args) < 2 or not isinstance(args[0], torch.Tensor):
            return None
        table, index = args[0], args[1]
        device = table.device
        if isinstance(index, torch.Tensor):
            if _readable_index(index, device):
                return None
            found = ("args[1]", index)
        elif isinstance(index, (tuple, list)):
            unreadable = [
                (f"args[1][{position}]", item)
                for position, item in enumerate(index)
                if isinstance(item, torch.Tensor) and not _readable_index(item, device)
            ]
            if not unreadable:
                return None
            found = unreadable[0]
        else:
            return None  # an int, a slice, None, Ellipsis: nothing to read from a device
        return self._judge(func, [("args[0]", table), found], args, kwargs, indexing=True)

    def _judge(
        self,
        func: Any,
        tensors: list[tuple[str, torch.Tensor]],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        indexing: bool,
    ) -> Optional[tuple[tuple[Any, ...], dict[str, Any]]]:
        """Blame the odd tensor out among ``tensors`` (on two devices or more), report it, and
        in a repairing simulation move every tensor that is not where it belongs."""
        module_path, module = self.enclosing_module()
        reference = reference_device([tensor.device for _, tensor in tensors], _module_device(module))
        odd_path, odd = next((path, tensor) for path, tensor in tensors if tensor.device != reference)
        reference_path = next(path for path, tensor in tensors if tensor.device == reference)
        self._report(func, module_path, module, reference_path, reference, odd_path, odd, indexing)
        if not self.owner.repair:
            return None
        from torch.utils._pytree import tree_map

        misplaced = {id(tensor) for _, tensor in tensors if tensor.device != reference}
        return tree_map(
            lambda value: value.to(reference) if id(value) in misplaced else value,
            (tuple(args), dict(kwargs)),
            is_leaf=lambda value: isinstance(value, PackedSequence),
        )

    # ------------------------------------------------------------------ reporting

    def enclosing_module(self) -> tuple[str, Optional[nn.Module]]:
        """The path and module of the innermost guarded submodule whose code is on the stack:
        the module whose forward (or helper method) ran the op; the first guarded module when
        none is. Walks the frames, so it is done only when a mismatch is reported."""
        paths = {id(module): (path, module) for path, module in self.owner.named_modules()}
        frame: Any = sys._getframe(1)
        while frame is not None:
            candidate = frame.f_locals.get("self")
            if candidate is not None and id(candidate) in paths:
                return paths[id(candidate)]
            frame = frame.f_back
        return "", self.owner.model

    def _advice(self, odd: torch.Tensor, origin: Optional[Origin], reference: torch.device, index_is_odd: bool) -> str:
        """What to do about the odd tensor: where it was made decides the fix."""
        if origin is not None:
            made = "create the tensor it was computed from" if origin.derived else "create it"
            return f"{made} with `device=` (`{origin.factory}(..., device=x.device)` for a tensor `x` it meets)"
        holder = advice.plain_tensor_attribute(self.owner.named_modules(), odd)
        if holder is not None and odd.device.type == "cpu":
            holder_path, name, holder_module = holder
            label = f"`{holder_path}` ({type(holder_module).__name__})" if holder_path else type(holder_module).__name__
            return (
                f"it is `self.{name}` of {label}, a plain tensor attribute, which `.to()` does not move: "
                f'register it with `self.register_buffer("{name}", ...)` in `__init__`'
            )
        if index_is_odd:
            return f"move the index to the CPU (`.cpu()`) or to {device_name(reference)}, where the indexed tensor is"
        return f"move it to {device_name(reference)} before this operation (`.to(x.device)` for a tensor `x` it meets)"

    def _report(
        self,
        func: Any,
        module_path: str,
        module: Optional[nn.Module],
        reference_path: str,
        reference: torch.device,
        odd_path: str,
        odd: torch.Tensor,
        indexing: bool,
    ) -> None:
        label = op_label(func)
        file, line = user_frame() or ("<unknown>", 1)
        module_class = type(module).__name__ if module is not None else ""
        inside = f"`{module_path}` ({module_class})" if module_path else f"{module_class}.forward"
        origin = self.origins.get(odd)
        created = f" ({origin.describe()})" if origin is not None else ""
        if indexing:
            table_device, index_device = (odd.device, reference) if odd_path == "args[0]" else (reference, odd.device)
            head = (
                f"`{label}` in {inside} indexes a tensor on {device_name(table_device)} with an index on "
                f"{device_name(index_device)}, which PyTorch rejects (indices must be on the CPU or on the indexed "
                "tensor's device)"
            )
        else:
            head = f"`{label}` in {inside} mixes devices"
        remedy = self._advice(odd, origin, reference, indexing and odd_path != "args[0]")
        called_from = getattr(self._local, "called_from", None)
        caller = _place(*called_from) if called_from is not None and called_from[0] != file else None
        message = (
            f"{head}: `{odd_path}` is on {device_name(odd.device)}{created}, `{reference_path}` is on "
            f"{device_name(reference)}; {remedy}" + (f"; the model was called from {caller}" if caller else "")
        )
        context = RuntimeContext(
            module_path=module_path,
            module_class=module_class,
            tensor=reference_path,
            tensor_device=device_name(reference),
            argument=odd_path,
            argument_device=device_name(odd.device),
            op=label,
            created_by=origin.created_by if origin is not None else None,
            called_from=caller,
        )
        finding = Finding("DL201", "mixed-device-op", Severity.ERROR, message, file, line, 1, line, 1, runtime=context)
        key = (label, file, line, reference_path, str(reference), odd_path, str(odd.device))
        self.owner.report(finding, key)
