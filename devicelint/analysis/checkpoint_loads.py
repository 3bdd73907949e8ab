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
from devicelint.analysis import walk
from devicelint.analysis.names import NamesRead, dotted_name, positional_args
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
    #: its positional parameters by position, as far as they matter to a caller (the path and
    #: location parameters' names, others empty)
    positions: tuple[str, ...] = ()
    #: what its load calls: ``torch.load``, or another loader (``load_state_from_file()``)
    loads_with: str = "torch.load"
    #: it downloads what it loads (torch.hub's ``load_state_dict_from_url``): a published file,
    #: never one the program saved itself
    downloads: bool = False
    #: the parameter whose ``load_state_dict`` it calls (``def load_checkpoint(model, path)``):
    #: it restores the model it is handed
    restores: Optional[str] = None


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


def find_loader(
    function: cst.FunctionDef,
    qualname_of: Callable[[cst.BaseExpression], Optional[str]],
    loader_called: Callable[[cst.Call], Optional[CheckpointLoader]] = lambda call: None,
) -> Optional[CheckpointLoader]:
    """The function's first load (in its body, a nested function's too) of a path built from a
    parameter (``path``, ``os.path.join(path, "state.pt")``): a ``torch.load``, or a call of
    another checkpoint loader (``loader_called`` tells which calls are, and what they are).
    With no ``map_location``, or with one a parameter that its body never rebinds
    (``map_location = map_location or "cpu"`` decides it there)."""
    params = function.params
    parameters = {param.name.value: param for param in [*params.posonly_params, *params.params, *params.kwonly_params]}
    if not parameters:
        return None
    finder = _Loads(qualname_of, loader_called)
    walk.visit(function.body, finder)
    rebound: Optional[frozenset[str]] = None
    for load, callee in finder.loads:
        if any(arg.star for arg in load.args) or not load.args:
            continue  # `**kwargs` may carry a map_location
        bound = _bound_by(load, callee)
        path_arg = bound.get(callee.path_parameter if callee is not None else "f")
        if path_arg is None:
            continue
        path = _parameter_read(path_arg.value, parameters)
        if path is None:
            continue
        if callee is None:
            location = bound.get("map_location")
            unset = location is None
        else:
            location = bound.get(callee.location_parameter) if callee.location_parameter is not None else None
            unset = callee.location_parameter is None or location is None and callee.location_defaults_to_none
            if callee.location_parameter is not None and location is None and not callee.location_defaults_to_none:
                continue
        if location is not None and is_none_literal(location.value):
            unset = True
        if unset:
            restores = _restored_parameter(function, parameters)
            return CheckpointLoader(
                function.name.value, path, None, False, load, _positions(function, path, None, restores), _loads_with(callee), restores=restores
            )
        assert location is not None
        if not isinstance(location.value, cst.Name) or location.value.value not in parameters:
            continue
        if rebound is None:
            rebound = helpers.assigned_names(helpers.body_statements(function))
        if location.value.value in rebound:
            continue
        default = parameters[location.value.value].default
        restores = _restored_parameter(function, parameters)
        return CheckpointLoader(
            function.name.value, path, location.value.value, default is not None and is_none_literal(default), load,
            _positions(function, path, location.value.value, restores), _loads_with(callee), restores=restores,
        )
    return None


def _restored_parameter(function: cst.FunctionDef, parameters: dict[str, cst.Param]) -> Optional[str]:
    """The parameter whose ``load_state_dict`` the loader calls (``model.load_state_dict(
    checkpoint["state_dict"])``), if one: the loader restores the model its caller hands it."""
    finder = _StateRestores()
    walk.visit(function.body, finder)
    return next((name for name in finder.receivers if name in parameters and name not in ("self", "cls")), None)


class _StateRestores(cst.CSTVisitor):
    """The names whose ``load_state_dict`` a body calls, in order."""

    def __init__(self) -> None:
        self.receivers: list[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and isinstance(func.value, cst.Name):
            self.receivers.append(func.value.value)


def _loads_with(callee: Optional[CheckpointLoader]) -> str:
    return "torch.load" if callee is None else f"{callee.name}()"


def _positions(function: cst.FunctionDef, path: str, location: Optional[str], restores: Optional[str] = None) -> tuple[str, ...]:
    """The loader's positional parameters as a caller binds them: the path's, the location's
    and the restored model's names, others empty (``self`` of a method included: callers reach
    it through an attribute)."""
    params = function.params
    return tuple(param.name.value if param.name.value in (path, location, restores) else "" for param in [*params.posonly_params, *params.params])


def restored_argument(call: cst.Call, loader: CheckpointLoader) -> Optional[cst.Arg]:
    """The argument of a call of ``loader`` that binds the model it restores, if any."""
    if loader.restores is None:
        return None
    return _bound_by(call, loader).get(loader.restores)


def _bound_by(call: cst.Call, callee: Optional[CheckpointLoader]) -> dict[str, cst.Arg]:
    """The arguments of a load call by the parameter they bind: ``torch.load(f, map_location)``,
    or the path and location parameters of another loader (by keyword; positionally where the
    loader's definition gives their positions)."""
    positions = ("f", "map_location") if callee is None else callee.positions
    bound: dict[str, cst.Arg] = {}
    for index, arg in enumerate(positional_args(call)):
        if index < len(positions) and positions[index]:
            bound[positions[index]] = arg
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg
    return bound


def _parameter_read(path: cst.BaseExpression, parameters: dict[str, cst.Param]) -> Optional[str]:
    """The one parameter a path expression is built from: ``path`` itself, or
    ``os.path.join(path, NAME)``, ``f"{path}/state.pt"``, ``Path(path) / "x"``; None where it
    reads no parameter or several."""
    if isinstance(path, cst.Name):
        return path.value if path.value in parameters else None
    reads = NamesRead(into_lambdas=False)
    walk.visit(path, reads)
    read = {name.split(".", 1)[0] for name in map(dotted_name, reads.nodes) if name is not None} & parameters.keys()
    return next(iter(read)) if len(read) == 1 else None


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


class _Loads(cst.CSTVisitor):
    """The load calls of a body, nested functions' too (a closure loads the path as well):
    ``torch.load`` (with None) and calls of other checkpoint loaders (with what they are)."""

    def __init__(
        self, qualname_of: Callable[[cst.BaseExpression], Optional[str]], loader_called: Callable[[cst.Call], Optional[CheckpointLoader]]
    ) -> None:
        self.qualname_of = qualname_of
        self.loader_called = loader_called
        self.loads: list[tuple[cst.Call, Optional[CheckpointLoader]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.qualname_of(node.func) == "torch.load":
            self.loads.append((node, None))
            return
        callee = self.loader_called(node)
        if callee is not None:
            self.loads.append((node, callee))
