"""DL201's check of the arguments PyTorch reads on the host (torch_api.HOST_ONLY_ARGUMENTS):
``pack_padded_sequence(x, lengths)`` with ``lengths`` on the GPU raises "'lengths' argument
should be a 1D CPU int64 tensor". Kept apart from the operand checks of mixed_device_op, which
owns it and hands it its events."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import OwnScopeVisitor
from devicelint.analysis.values import Kind, Value
from devicelint.rules._messages import where

#: (function, parameter): a parameter of a function of the file
_Parameter = tuple[cst.FunctionDef, str]
#: (what the call is called, the error PyTorch raises for a GPU tensor there)
_HostRead = tuple[str, str]


def on_accelerator(value: Value) -> bool:
    """A tensor that may be on an accelerator: moved or created there, or a module's tensor
    (its outputs, and inside its methods its tensor inputs - "the model's device", as for numpy
    reads, DL204). A free function's tensor argument is where its caller put it: no evidence."""
    return value.kind == Kind.TENSOR and value.device is not None and value.device.may_be_accelerator and not value.device.argument


class HostOnlyArguments:
    """Reports a tensor that may be on an accelerator given where PyTorch reads the argument on
    the host - at the call itself, or, where a module class of the file hands a parameter of its
    ``forward`` there unchanged (also through the ``forward`` of a submodule of the file, or
    through a local bound once to it: ``masked = lengths[mask]``), at that call, naming the
    module call that hands the tensor in."""

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        self.ctx = ctx
        #: host-only calls reported (once each, however many calls reach them)
        self._reported: set[cst.Call] = set()
        #: per parameter: the host-only calls of its function that read it as it came in, with
        #: the argument's expression and what the call is called
        self._reads: dict[_Parameter, dict[cst.Call, tuple[cst.BaseExpression, _HostRead]]] = {}
        #: per parameter of a module's ``forward``: the parameters of submodules' ``forward``s it
        #: is handed to unchanged
        self._handed_on: dict[_Parameter, set[_Parameter]] = {}
        #: module calls handing a tensor that may be on an accelerator to a parameter of a
        #: ``forward`` of the file (with the call whose pass met it, in a pass of one call site)
        self._entries: list[tuple[CallEvent, cst.Arg, Value, _Parameter, Optional[cst.Call]]] = []
        #: per function: its locals bound exactly once, by a plain ``name = expression``
        self._bound_once: dict[cst.FunctionDef, dict[str, cst.BaseExpression]] = {}

    def on_call(self, event: CallEvent) -> None:
        found = self._host_only_argument(event)
        if found is not None:
            arg, value, called = found
            if on_accelerator(value):
                self._report(event.node, arg.value, value, called)
            else:
                parameter = self._parameter_read(arg.value)
                if parameter is not None:
                    self._reads.setdefault(parameter, {}).setdefault(event.node, (arg.value, called))
        if event.callee.kind == Kind.MODULE:
            self._note_module_call(event)

    def _host_only_argument(self, event: CallEvent) -> Optional[tuple[cst.Arg, Value, _HostRead]]:
        """The argument of a call that PyTorch reads on the host, with the call's name and the
        error PyTorch raises."""
        where_read: Optional[tuple[int, frozenset[str], str]] = None
        if event.qualname is not None and event.qualname in api.HOST_ONLY_ARGUMENTS:
            where_read, called = api.HOST_ONLY_ARGUMENTS[event.qualname], event.qualname.rsplit(".", 1)[-1]
        elif event.method in api.HOST_ONLY_METHOD_ARGUMENTS and event.receiver is not None and event.receiver.kind == Kind.TENSOR:
            where_read, called = api.HOST_ONLY_METHOD_ARGUMENTS[event.method], event.method
        if where_read is None or any(arg.star for arg, _ in event.args):
            return None
        position, keywords, error = where_read
        for arg, value in event.args:
            if arg.keyword is not None and arg.keyword.value in keywords:
                return arg, value, (called, error)
        positional = [(arg, value) for arg, value in event.args if arg.keyword is None]
        if position < len(positional):
            return (*positional[position], (called, error))
        return None

    def _note_module_call(self, event: CallEvent) -> None:
        forward = self.ctx.analyzer.forward_parameters(event.callee, event.args)
        if forward is None:
            return
        function, parameters = forward
        for (arg, value), parameter in zip(event.args, parameters):
            if parameter is None:
                continue
            if on_accelerator(value):
                self._entries.append((event, arg, value, (function, parameter), self.ctx.call_context))
            outer = self._parameter_read(arg.value)
            if outer is not None:
                self._handed_on.setdefault(outer, set()).add((function, parameter))

    def _parameter_read(self, expression: cst.BaseExpression) -> Optional[_Parameter]:
        """The parameter of the function being analysed that ``expression`` reads as it came in
        (see parameter_read_unchanged), also through a local bound once to such a read."""
        function = self.ctx.current_function.node
        if function is None:
            return None
        analyzer = self.ctx.analyzer
        parameter = analyzer.parameter_read_unchanged(function, expression)
        if parameter is None and isinstance(expression, cst.Name):
            bound = self._locals_bound_once(function).get(expression.value)
            if bound is not None:
                parameter = analyzer.parameter_read_unchanged(function, bound)
        return (function, parameter) if parameter is not None else None

    def _locals_bound_once(self, function: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
        known = self._bound_once.get(function)
        if known is None:
            finder = _SingleBindings()
            walk.visit(function.body, finder)
            known = self._bound_once[function] = {name: value for name, value in finder.values.items() if finder.counts[name] == 1}
        return known

    def finish(self) -> None:
        for event, arg, value, entry, called_from in self._entries:
            handed_as = entry[1]
            for _, reads in self._reads_reached(entry):
                for node, (expression, (called, error)) in reads.items():
                    if node in self._reported:
                        continue
                    self._reported.add(node)
                    self.ctx.report(
                        expression,
                        f"`{called}` reads its argument `{self.ctx.source_of(expression)}` on the host, but it comes from "
                        f"`{self.ctx.source_of(arg.value)}`, {where(value, self.ctx)}, which the call at line {self.ctx.line(event.node)} "
                        f"hands to the model as `{handed_as}`: "
                        f"PyTorch raises for a GPU tensor there (\"{error}\"); "
                        f"pass `{self.ctx.source_of(expression)}.cpu()`, or keep it on the CPU at the call",
                        related=((event.node, f"`{self.ctx.source_of(arg.value)}` is handed to the model here"),),
                        called_from=called_from,
                    )

    def _reads_reached(self, entry: _Parameter) -> list[tuple[_Parameter, dict[cst.Call, tuple[cst.BaseExpression, _HostRead]]]]:
        """The host-only reads of ``entry`` and of the submodule parameters it is handed on to."""
        found = []
        seen = {entry}
        pending = [entry]
        while pending:
            parameter = pending.pop()
            if parameter in self._reads:
                found.append((parameter, self._reads[parameter]))
            for inner in self._handed_on.get(parameter, ()):
                if inner not in seen:
                    seen.add(inner)
                    pending.append(inner)
        return found

    def _report(self, node: cst.Call, expression: cst.BaseExpression, value: Value, read: _HostRead) -> None:
        if node in self._reported:
            return
        self._reported.add(node)
        called, error = read
        self.ctx.report(
            expression,
            f"`{called}` reads its argument `{self.ctx.source_of(expression)}` on the host, but it is {where(value, self.ctx)}: "
            f"PyTorch raises for a GPU tensor there (\"{error}\"); "
            f"pass `{self.ctx.source_of(expression)}.cpu()`",
        )


class _SingleBindings(OwnScopeVisitor):
    """Counts the bindings of each local of a function body (not of functions or classes nested
    in it), keeping the expression of plain ``name = expression`` ones."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.values: dict[str, cst.BaseExpression] = {}

    def _bind(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Name):
            self.counts[target.value] = self.counts.get(target.value, 0) + 1
            if value is not None:
                self.values[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value, None)

    def visit_Assign(self, node: cst.Assign) -> None:
        single = len(node.targets) == 1
        for target in node.targets:
            self._bind(target.target, node.value if single else None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, None)

