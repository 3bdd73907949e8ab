"""A tensor handed to a moved model by a function that moves the model's other inputs itself
but not this one: the function takes charge of placing what it hands the model, and forgot one
(DL203's finding; DL201 yields to it, one bug, one finding)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.helpers import parameter_read_through
from devicelint.analysis.values import Kind, Value


def unmoved_beside_moved(function: Optional[cst.FunctionDef], event: CallEvent, arg: cst.Arg, value: Value) -> Optional[str]:
    """The parameter of ``function`` that ``arg`` hands the moved model ``event`` calls - as it
    came in, or reshaped on the way (``rxn_fp = rxn_fp.view(1, -1)``) - on the host, made by the
    caller, where another argument of the call is a tensor ``function`` moved itself; None
    otherwise."""
    module = event.callee
    if function is None or arg.star or module.device is None or not module.device.may_be_accelerator or module.device.argument:
        return None
    if value.kind != Kind.TENSOR or value.device is None or not value.device.is_cpu or value.scalar is True or value.origin is None:
        return None
    if walk.contains(function, value.origin.node):
        return None  # made here: not what the caller handed
    parameter = parameter_read_through(function, arg.value)
    if parameter is None:
        return None
    for other_arg, other in event.args:
        if other_arg is arg or other.kind != Kind.TENSOR or other.device is None or not other.device.may_be_accelerator or other.origin is None:
            continue
        move = other.origin.node
        if (
            isinstance(move, cst.Call) and isinstance(move.func, cst.Attribute) and move.func.attr.value in ("to", "cuda")
            and walk.contains(function, move)
        ):
            return parameter
    return None
