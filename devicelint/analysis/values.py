"""Abstract values of the device-flow analysis: kind x device x origin."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import libcst as cst


class Kind(enum.Enum):
    TENSOR = "tensor"
    MODULE = "module"
    CRITERION = "criterion"
    OPTIMIZER = "optimizer"
    LOADER = "loader"
    DATASET = "dataset"
    #: one item drawn from a loader or dataset: a tensor or a (nested) collection of tensors
    BATCH = "batch"
    DEVICE = "device"
    #: a tuple/list/dict whose element values are known (``items``)
    CONTAINER = "container"
    #: a reference to something imported or a dotted path under it (``qualname``)
    REF = "ref"
    #: a class defined in the analysed file (``info`` is its ClassInfo)
    CLASS = "class"
    FUNCTION = "function"
    STR = "str"
    NUMBER = "number"
    NDARRAY = "ndarray"
    #: the iterable of a module's parameters (``info`` is the module's Value)
    PARAMETERS = "parameters"
    UNKNOWN = "unknown"


#: kinds whose value carries a device
PLACED_KINDS = frozenset({Kind.TENSOR, Kind.MODULE, Kind.CRITERION, Kind.BATCH, Kind.LOADER, Kind.DATASET})

_CUDA_INDEX = re.compile(r"^(cuda|xpu|mps|hpu|npu)(?::(\d+))?$")


@dataclass(frozen=True)
class Device:
    """Where a value lives: ``cpu``, ``meta`` or ``accel`` (a GPU or other accelerator).

    ``index`` is known only for literals such as ``"cuda:1"`` or ``.cuda(1)``; two accelerator
    devices conflict only when both indices are known and differ. ``label`` is how the source
    spells it (``device``, ``"cuda:1"``, ``args.device``) and is used in messages only.
    """

    kind: str
    label: str
    index: Optional[int] = None

    @property
    def is_cpu(self) -> bool:
        return self.kind == "cpu"

    @property
    def is_accel(self) -> bool:
        return self.kind == "accel"

    def conflicts_with(self, other: "Device") -> bool:
        if self.kind != other.kind:
            return True
        if self.kind == "accel" and self.index is not None and other.index is not None:
            return self.index != other.index
        return False

    def describe(self) -> str:
        if self.kind == "cpu":
            return "the CPU"
        if self.kind == "meta":
            return "the meta device"
        return f"`{self.label}`"


CPU = Device("cpu", "cpu")
META = Device("meta", "meta")


def device_from_string(text: str, label: Optional[str] = None) -> Optional[Device]:
    """Parse a device string literal such as ``"cuda:1"``, ``"cpu"``, ``"mps"``."""
    text = text.strip()
    if text == "cpu" or text.startswith("cpu:"):
        return CPU
    if text == "meta":
        return META
    match = _CUDA_INDEX.match(text)
    if match:
        index = int(match.group(2)) if match.group(2) is not None else None
        return Device("accel", label or repr(text).replace("'", '"'), index)
    return None


def join_devices(first: Optional[Device], second: Optional[Device]) -> Optional[Device]:
    if first is None or second is None:
        return None
    if first.conflicts_with(second):
        return None
    if first.index != second.index:
        return Device(first.kind, first.label, None)
    return first


@dataclass(frozen=True)
class Origin:
    """The node that gave a value its device, and how ("created by `torch.zeros`")."""

    node: cst.CSTNode
    how: str
    #: the value is input data: drawn from a DataLoader or dataset, or converted from numpy
    from_data: bool = False


@dataclass(frozen=True)
class Value:
    kind: Kind
    device: Optional[Device] = None
    origin: Optional[Origin] = None
    qualname: Optional[str] = None
    #: True for a 0-dim tensor, False when known to have at least one dimension, None if unknown
    scalar: Optional[bool] = None
    #: kind-specific payload: ClassInfo, LoaderInfo, a tuple of item Values, a literal ...
    info: Any = field(default=None, compare=False)
    literal: Any = None

    def with_device(self, device: Optional[Device], origin: Optional[Origin]) -> "Value":
        return replace(self, device=device, origin=origin if device is not None else self.origin)

    @property
    def is_tensor_like(self) -> bool:
        return self.kind in (Kind.TENSOR, Kind.BATCH)


UNKNOWN = Value(Kind.UNKNOWN)


def join(first: Value, second: Value) -> Value:
    """Least upper bound at a control-flow merge: facts that disagree become unknown."""
    if first is second or first == second and first.info is second.info:
        return first
    if first.kind != second.kind:
        return UNKNOWN
    if first.kind in (Kind.STR, Kind.NUMBER):
        return Value(first.kind)
    if first.kind in (Kind.REF, Kind.CLASS, Kind.FUNCTION) and (
        first.qualname != second.qualname or first.info is not second.info
    ):
        return UNKNOWN
    device = join_devices(first.device, second.device)
    origin = first.origin if device is not None and first.origin == second.origin else (
        first.origin if device is not None else None
    )
    scalar = first.scalar if first.scalar == second.scalar else None
    info = first.info if first.info is second.info else None
    if first.kind == Kind.CONTAINER and info is None:
        info = _join_items(first.info, second.info)
    return Value(first.kind, device, origin, first.qualname if first.qualname == second.qualname else None, scalar, info)


def _join_items(first: Any, second: Any) -> Any:
    if isinstance(first, tuple) and isinstance(second, tuple) and len(first) == len(second):
        return tuple(join(a, b) for a, b in zip(first, second))
    return None


def conflicting(first: Value, second: Value) -> bool:
    """Are two tensors known to live on devices that PyTorch will refuse to mix?

    Both devices must be known; a 0-dim CPU tensor mixes with anything (PyTorch allows it), so
    a CPU operand must be known to have at least one dimension.
    """
    if first.device is None or second.device is None or not first.device.conflicts_with(second.device):
        return False
    for side in (first, second):
        if side.device is not None and side.device.is_cpu and side.scalar is not False:
            return False
    return True
