"""Functions that load a checkpoint with ``torch.load``, seen from their calls.

A function of the project (``def _load_checkpoint(filename, map_location=None): return
torch.load(filename, map_location=map_location)``) or of a library (mmcv's and mmengine's
``load_checkpoint``, see torch_api.CHECKPOINT_LOADERS) is summarised as a *checkpoint loader*:
the parameter it loads from, and the parameter it hands to ``torch.load`` as ``map_location``
(or none at all: ``torch.load(path)``). A call of one is a ``torch.load`` at the call site; it
loads without a ``map_location`` where the loader has none, where the call leaves that
parameter at a ``None`` default, passes ``None``, or passes a value that a conditional
expression makes ``None`` on one arm (``"cpu" if device == "cpu" else None``).

This module holds the syntax-only parts; Summaries.checkpoint_load_call answers for a call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import helpers
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.analysis.values import NoneOnOneArm, Value, is_none_literal, none_on_one_arm


@dataclass(frozen=True)
class CheckpointLoader:
    """A function whose ``torch.load`` reads the path one of its parameters names."""

    #: how messages name it: ``_load_checkpoint`` (a library's: ``mmcv.runner.load_checkpoint``)
    name: str
    path_parameter: str
    #: the parameter handed to ``torch.load`` as ``map_location``; None: its load has none
    location_parameter: Optional[str]
    #: that parameter defaults to ``None`` (a parameter without a default must be given)
    location_defaults_to_none: bool
    #: the ``torch.load`` call in the project's own code (None for a library's loader)
    load: Optional[cst.Call] = None


@dataclass(frozen=True)
class UnmappedLoadCall:
    """A call of a checkpoint loader that loads without a ``map_location``."""

    loader: CheckpointLoader
    #: the argument the path is given by
    path: cst.Arg
    #: the argument given for ``map_location`` (``None``, or a value None on one arm); None
    #: where the call leaves it at its ``None`` default or the loader has no such parameter
    location: Optional[cst.Arg]
    #: the conditional expression that makes the location ``None`` on one arm, if that is how
    none_on_arm: Optional[NoneOnOneArm]


def find_loader(function: cst.FunctionDef, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> Optional[CheckpointLoader]:
    """The function's first ``torch.load`` (in its body, a nested function's too) of a path
    it is given as a parameter, with no ``map_location`` or with one a parameter that its body
    never rebinds (``map_location = map_location or "cpu"`` decides it there)."""
    params = function.params
    parameters = {param.name.value: param for param in [*params.posonly_params, *params.params, *params.kwonly_params]}
    if not parameters:
        return None
    finder = _TorchLoads(qualname_of)
    function.body.visit(finder)
    rebound: Optional[frozenset[str]] = None
    for load in finder.loads:
        if any(arg.star for arg in load.args) or not load.args or load.args[0].keyword is not None:
            continue  # `**kwargs` may carry a map_location
        path = load.args[0].value
        if not isinstance(path, cst.Name) or path.value not in parameters:
            continue
        location = keyword_arg(load, "map_location")
        if location is None and len(positional_args(load)) >= 2:
            location = positional_args(load)[1]
        if location is None:
            return CheckpointLoader(function.name.value, path.value, None, False, load)
        if not isinstance(location.value, cst.Name) or location.value.value not in parameters:
            continue
        if rebound is None:
            rebound = helpers.assigned_names(helpers.body_statements(function))
        if location.value.value in rebound:
            continue
        default = parameters[location.value.value].default
        return CheckpointLoader(function.name.value, path.value, location.value.value, default is not None and is_none_literal(default), load)
    return None


def unmapped_call(
    loader: CheckpointLoader, args: tuple[tuple[cst.Arg, Value], ...], parameters: list[Optional[str]]
) -> Optional[UnmappedLoadCall]:
    """Does this call of ``loader`` (its arguments, and the parameter each binds) load without a
    ``map_location``? Not where the path comes from a default, nor where ``*args``/``**kwargs``
    may carry the location."""
    by_parameter = {name: (arg, value) for (arg, value), name in zip(args, parameters) if name is not None}
    path = by_parameter.get(loader.path_parameter)
    if path is None:
        return None
    if loader.location_parameter is None:
        return UnmappedLoadCall(loader, path[0], None, None)
    given = by_parameter.get(loader.location_parameter)
    if given is None:
        if not loader.location_defaults_to_none or any(arg.star for arg, _ in args):
            return None
        return UnmappedLoadCall(loader, path[0], None, None)
    arg, value = given
    if is_none_literal(arg.value):
        return UnmappedLoadCall(loader, path[0], arg, None)
    arm = none_on_one_arm(value)
    if arm is not None:
        return UnmappedLoadCall(loader, path[0], arg, arm)
    return None


def library_parameters(args: tuple[tuple[cst.Arg, Value], ...], path_position: int, location_position: int, names: tuple[str, str]) -> list[Optional[str]]:
    """The parameter of a library loader (see torch_api.CHECKPOINT_LOADERS) each argument binds:
    by position for the path and the location, by keyword for any."""
    positions = {path_position: names[0], location_position: names[1]}
    bound: list[Optional[str]] = []
    position = 0
    for arg, _ in args:
        if arg.star:
            bound.append(None)
        elif arg.keyword is None:
            bound.append(positions.get(position))
            position += 1
        else:
            bound.append(arg.keyword.value)
    return bound


class _TorchLoads(cst.CSTVisitor):
    """The ``torch.load`` calls of a body, nested functions' too (a closure loads the path as well)."""

    def __init__(self, qualname_of: Callable[[cst.BaseExpression], Optional[str]]) -> None:
        self.qualname_of = qualname_of
        self.loads: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname_of(node.func) == "torch.load":
            self.loads.append(node)
