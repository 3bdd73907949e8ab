"""Which parameters a function's body combines with one another as tensors.

A module class that owns no parameters or buffers (a loss: ``NPairsLoss``, a similarity or
masking helper) computes with nothing but what it is handed, so its inputs may come in on any
device - as long as they come in on the same one where its ``forward`` combines them:
``self.ce(self.similarities(x1, x2), target)`` meets ``target`` with a tensor made of the
input ``predict`` (``x1, x2 = predict``). This module reads those combinations from the body's
syntax, once per function: which parameter pairs reach one tensor operation (an arithmetic or
comparison operator, a call's arguments, a method's receiver and arguments, a subscript's base
and index), following the names the body binds from them. Reads that carry no data - a shape,
a dtype, a device (``pred.size(0)``, ``x.shape``, ``device=x.device``), a move (``y.to(x)``),
a conversion to Python or the host (``x.item()``, ``x.cpu()``) - combine nothing.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis import walk

#: attributes that describe a tensor without carrying its data
_DESCRIPTIVE_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout"})
#: methods whose result carries none of the receiver's tensor data on its device (a size, a
#: Python value, a host copy)
_DATALESS_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "nelement", "item", "tolist", "cpu", "numpy", "get_device",
        "is_floating_point", "is_contiguous", "element_size", "stride",
    }
)
#: methods whose arguments only give the receiver a device, dtype or shape to take: the result
#: is the receiver's data (``y.to(x)``, ``y.type_as(x)``, ``x.new_zeros(n)``)
_RECEIVER_KEEPING_METHODS = frozenset(
    {"to", "type", "type_as", "view_as", "reshape_as", "expand_as", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"}
)
_UNCOMBINING_METHODS = _DATALESS_METHODS | _RECEIVER_KEEPING_METHODS
#: functions of Python that take a value's length, kind or text, never its tensor data
_UNCOMBINING_FUNCTIONS = frozenset({"len", "isinstance", "print", "str", "repr", "int", "float", "bool", "type", "getattr", "hasattr", "range", "id"})
#: keywords that give a device, a dtype or a layout, never data
_DESCRIPTIVE_KEYWORDS = frozenset({"device", "dtype", "layout", "requires_grad", "pin_memory", "non_blocking", "memory_format"})

Pairs = frozenset[tuple[str, str]]


def combined_parameter_pairs(function: cst.FunctionDef, skip_first: bool) -> Pairs:
    """The pairs of distinct parameters of ``function`` (both orders) that its body combines
    in one tensor operation (see the module's docs); ``skip_first`` leaves out ``self``."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    names = [p.name.value for p in (positional[1:] if skip_first else positional)] + [p.name.value for p in params.kwonly_params]
    if len(names) < 2:
        return frozenset()
    finder = _Combinations(names)
    walk.visit(function.body, finder)
    return frozenset(finder.pairs)


class _Combinations(cst.CSTVisitor):
    """Follows, in the order the body is written, which parameters each bound name is made of,
    and collects the parameter pairs that meet in an operation."""

    def __init__(self, parameters: list[str]) -> None:
        self.made_of: dict[str, frozenset[str]] = {name: frozenset({name}) for name in parameters}
        self.pairs: set[tuple[str, str]] = set()

    # ---- what an expression is made of

    def sources(self, node: Optional[cst.BaseExpression]) -> frozenset[str]:
        if node is None:
            return frozenset()
        if isinstance(node, cst.Name):
            return self.made_of.get(node.value, frozenset())
        if isinstance(node, cst.Attribute):
            if node.attr.value in _DESCRIPTIVE_ATTRIBUTES:
                return frozenset()
            return self.sources(node.value)
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value in _UNCOMBINING_FUNCTIONS:
                return frozenset()
            if isinstance(func, cst.Attribute) and func.attr.value in _DATALESS_METHODS:
                return frozenset()
            if isinstance(func, cst.Attribute) and func.attr.value in _RECEIVER_KEEPING_METHODS:
                return self.sources(func.value)
            found = self.sources(func) if isinstance(func, cst.Attribute) else frozenset()
            for arg in node.args:
                if arg.keyword is None or arg.keyword.value not in _DESCRIPTIVE_KEYWORDS:
                    found |= self.sources(arg.value)
            return found
        if isinstance(node, cst.Subscript):
            found = self.sources(node.value)
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    found |= self.sources(element.slice.value)
            return found
        if isinstance(node, cst.BinaryOperation):
            return self.sources(node.left) | self.sources(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self.sources(node.expression)
        if isinstance(node, (cst.Tuple, cst.List)):
            found = frozenset()
            for element in node.elements:
                found |= self.sources(element.value)
            return found
        if isinstance(node, cst.IfExp):
            return self.sources(node.body) | self.sources(node.orelse)
        return frozenset()

    def meet(self, operands: list[frozenset[str]]) -> None:
        """Operands of one operation: every parameter of one meets every other parameter of another."""
        for index, first in enumerate(operands):
            for second in operands[index + 1:]:
                for a in first:
                    for b in second:
                        if a != b:
                            self.pairs.add((a, b))
                            self.pairs.add((b, a))

    # ---- bindings

    def bind(self, target: cst.BaseExpression, made_of: frozenset[str], accumulate: bool = False) -> None:
        if isinstance(target, cst.Name):
            self.made_of[target.value] = (self.made_of.get(target.value, frozenset()) | made_of) if accumulate else made_of
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, made_of, accumulate)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, made_of, accumulate)

    def leave_Assign(self, node: cst.Assign) -> None:
        made_of = self.sources(node.value)
        for target in node.targets:
            self.bind(target.target, made_of)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, self.sources(node.value))

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self.meet([self.sources(node.target), self.sources(node.value)])
        self.bind(node.target, self.sources(node.value), accumulate=True)

    def visit_For(self, node: cst.For) -> None:
        self.bind(node.target, self.sources(node.iter))

    # ---- operations

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self.meet([self.sources(node.left), self.sources(node.right)])

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.meet([self.sources(node.left), *(self.sources(target.comparator) for target in node.comparisons)])

    def visit_Subscript(self, node: cst.Subscript) -> None:
        indices = [self.sources(element.slice.value) for element in node.slice if isinstance(element.slice, cst.Index)]
        self.meet([self.sources(node.value), *indices])

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in _UNCOMBINING_FUNCTIONS:
            return
        if isinstance(func, cst.Attribute) and func.attr.value in _UNCOMBINING_METHODS:
            return
        operands = [self.sources(func.value)] if isinstance(func, cst.Attribute) else []
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value not in _DESCRIPTIVE_KEYWORDS:
                operands.append(self.sources(arg.value))
        self.meet(operands)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function runs on its own arguments

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
