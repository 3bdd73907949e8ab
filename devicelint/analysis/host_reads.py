"""Parameters a function reads only on the host.

A module's ``forward(self, x, sizes)`` may take, beside its data, a small tensor of sizes or
counts that it turns into Python numbers before using them: ``h, w = sizes[i].tolist()``,
``int(lengths.max())``, a slice bound ``mask[i, count[i]:]``. PyTorch reads such a tensor on
the host whatever the model's device, so a caller that hands it a CPU tensor while the model is
on a GPU is right. The rules that report a host tensor handed to a model on an accelerator
(DL201, DL202) ask here first.

The question is answered on the function's text, conservatively: the parameter, and every local
computed only from it (``patch_len = sizes[:, 0] * sizes[:, 1]``), must end in a host read -
``tolist``/``item``/``numpy``, ``int()``/``float()``/``bool()``/``len()``/``range()``, a shape
or dtype read, a condition, a slice bound or an index (PyTorch takes indices on the CPU for a
tensor on any device) - or be handed to another method of the same class that reads it so. Any
other use (an operation with a value not computed from it, a call that is not one of those, a
return, an attribute or container it is stored in, a nested function that names it) means the
tensor may meet the model's: not host-only.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.names import is_static_or_class_method

#: tensor methods whose result, for a tensor on the host, is again a tensor on the host, and
#: whose arguments are dimensions, sizes or flags, never another tensor
_SHAPING_METHODS = frozenset(
    {
        "sum", "prod", "mean", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "abs", "neg", "long", "int",
        "float", "double", "short", "bool", "half", "view", "reshape", "flatten", "squeeze", "unsqueeze", "t",
        "transpose", "permute", "contiguous", "clone", "detach", "cpu", "unbind", "split", "chunk", "flip", "sort",
        "unique", "nonzero", "ceil", "floor", "round",
    }
)
#: tensor methods that keep a host tensor on the host where their other operand is a number
#: (``lengths.max()``, ``counts.clamp(min=1)``) but meet it where it is a tensor
_ELEMENTWISE_METHODS = frozenset({"max", "min", "clamp", "clamp_min", "clamp_max", "add", "sub", "mul", "div"})
#: tensor methods and attributes that bring a value to Python (or describe the tensor) on the host
_HOST_READ_METHODS = frozenset({"tolist", "item", "numpy", "size", "dim", "numel", "nelement", "__len__", "__index__"})
_DESCRIBING_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad"})
_KEEPING_ATTRIBUTES = frozenset({"T", "mT", "data"})
#: builtins that read their argument on the host and give back a Python value
_HOST_READ_BUILTINS = frozenset({"int", "float", "bool", "len", "range", "str", "repr", "print", "isinstance", "round"})
#: how deep hand-ons to other methods of the class are followed
_MAX_DEPTH = 3

_DERIVED = True
_CLEAN = False

#: (method name) -> (the method, or None where the class defines none)
FindMethod = Callable[[str], Optional[cst.FunctionDef]]


def method_finder(info: object) -> FindMethod:
    """The methods of the class ``info`` (a facts.ClassInfo; anything else finds none)."""
    find = getattr(info, "find_method", None)

    def find_method(name: str) -> Optional[cst.FunctionDef]:
        found = find(name) if find is not None else None
        return found[0] if found is not None else None

    return find_method


class HostReads:
    """Answers, per function and parameter, once (a rule's instance keeps one per file)."""

    def __init__(self) -> None:
        self._answers: dict[tuple[cst.FunctionDef, str], bool] = {}

    def read_only_on_host(self, function: cst.FunctionDef, parameter: str, find_method: FindMethod, depth: int = 0) -> bool:
        """Does ``function`` use its parameter ``parameter`` only in reads on the host (see the
        module docstring)? ``find_method`` finds the other methods of its class, for
        ``self.method(parameter)``."""
        key = (function, parameter)
        known = self._answers.get(key)
        if known is not None:
            return known
        self._answers[key] = False  # a method handing it back to itself: not proven
        answer = _Reader(self, function, parameter, find_method, depth).host_only()
        self._answers[key] = answer
        return answer


class _Escaped(Exception):
    """The parameter, or a value computed from it, is used in a way that is not a host read."""


class _Reader:
    def __init__(self, reads: HostReads, function: cst.FunctionDef, parameter: str, find_method: FindMethod, depth: int) -> None:
        self._reads = reads
        self._function = function
        self._find_method = find_method
        self._depth = depth
        self._derived = {parameter}
        #: locals holding Python numbers read on the host (``n = len(xs)``, ``for i in range(n)``,
        #: ``h, w = sizes.tolist()``): indices that a host tensor can take
        self._numbers: set[str] = set()

    def host_only(self) -> bool:
        if not _takes_named(self._function, next(iter(self._derived))):
            return False
        try:
            # a loop may use, on its next turn, a local computed from the parameter further
            # down: the body is read until no new local is found (names stay derived once seen)
            for _ in range(4):
                before = len(self._derived)
                self._block(self._function.body)
                if len(self._derived) == before:
                    return True
            return False
        except _Escaped:
            return False

    # ------------------------------------------------------------------ statements

    def _block(self, block: cst.BaseSuite) -> None:
        if isinstance(block, cst.SimpleStatementSuite):
            for small in block.body:
                self._small(small)
            return
        for statement in block.body:
            self._statement(statement)

    def _statement(self, statement: cst.BaseStatement) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._small(small)
        elif isinstance(statement, cst.If):
            self._expression(statement.test)
            self._block(statement.body)
            if statement.orelse is not None:
                orelse = statement.orelse
                if isinstance(orelse, cst.If):
                    self._statement(orelse)
                else:
                    self._block(orelse.body)
        elif isinstance(statement, cst.For):
            if self._expression(statement.iter) is _DERIVED:
                self._bind(statement.target)
            else:
                self._assign_target(statement.target)
                if _is_range(statement.iter):
                    self._note_numbers(statement.target)
            self._block(statement.body)
            if statement.orelse is not None:
                self._block(statement.orelse.body)
        elif isinstance(statement, cst.While):
            self._expression(statement.test)
            self._block(statement.body)
            if statement.orelse is not None:
                self._block(statement.orelse.body)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if self._expression(item.item) is _DERIVED:
                    raise _Escaped
                if item.asname is not None:
                    self._assign_target(item.asname.name)
            self._block(statement.body)
        elif isinstance(statement, cst.Try):
            self._block(statement.body)
            for handler in statement.handlers:
                self._block(handler.body)
            if statement.orelse is not None:
                self._block(statement.orelse.body)
            if statement.finalbody is not None:
                self._block(statement.finalbody.body)
        elif isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            if self._names_derived(statement):
                raise _Escaped  # a nested scope that names it: where it goes is not followed
        else:
            # match statements and whatever else: read only where the parameter is not named
            if self._names_derived(statement):
                raise _Escaped

    def _small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            derived = self._expression(small.value)
            for target in small.targets:
                if derived is _DERIVED:
                    self._bind(target.target)
                else:
                    self._assign_target(target.target)
                    if self._host_scalar(small.value) or _reads_to_python(small.value):
                        self._note_numbers(target.target)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None and self._expression(small.value) is _DERIVED:
                self._bind(small.target)
        elif isinstance(small, cst.AugAssign):
            target_derived = self._expression(small.target)
            value_derived = self._expression(small.value)
            if target_derived is not value_derived:
                other = small.target if value_derived is _DERIVED else small.value
                if not (_is_plain_value(other) or self._host_scalar(other)):
                    raise _Escaped  # `total += count`: it meets what the other side holds
        elif isinstance(small, cst.Expr):
            self._expression(small.value)
        elif isinstance(small, (cst.Return, cst.Raise)):
            value = small.value if isinstance(small, cst.Return) else small.exc
            if value is not None and self._expression(value) is _DERIVED:
                raise _Escaped  # handed back: where it goes then is the caller's
        elif isinstance(small, cst.Assert):
            self._expression(small.test)
            if small.msg is not None:
                self._expression(small.msg)
        elif isinstance(small, (cst.Pass, cst.Break, cst.Continue, cst.Import, cst.ImportFrom)):
            return
        elif self._names_derived(small):  # del, global, nonlocal
            raise _Escaped

    def _bind(self, target: cst.BaseExpression) -> None:
        """``target`` is bound to a value computed from the parameter: a host tensor."""
        if isinstance(target, cst.Name):
            self._derived.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            # unpacking a host tensor gives host tensors
            for element in target.elements:
                self._bind(element.value.value if isinstance(element.value, cst.StarredElement) else element.value)
        else:
            raise _Escaped  # kept in an attribute or a container: used elsewhere

    def _assign_target(self, target: cst.BaseExpression) -> None:
        """A target bound to a value not computed from the parameter: its own parts (an index,
        a slice bound) may still read the parameter."""
        if isinstance(target, cst.Subscript):
            self._subscript_parts(target)
            self._expression(target.value)
        elif isinstance(target, cst.Attribute):
            self._expression(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                value = element.value
                self._assign_target(value.value if isinstance(value, cst.StarredElement) else value)

    # ------------------------------------------------------------------ expressions

    def _expression(self, node: cst.BaseExpression) -> bool:
        """Whether ``node``'s value is computed from the parameter (a host tensor, or a
        container of them); raises _Escaped where it is used otherwise than read on the host."""
        if isinstance(node, cst.Name):
            return node.value in self._derived
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
            return _CLEAN
        if isinstance(node, cst.Attribute):
            if self._expression(node.value) is _CLEAN:
                return _CLEAN
            if node.attr.value in _DESCRIBING_ATTRIBUTES:
                return _CLEAN
            if node.attr.value in _KEEPING_ATTRIBUTES:
                return _DERIVED
            raise _Escaped
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.Subscript):
            derived = self._expression(node.value)
            self._subscript_parts(node, indexing_host_tensor=derived)
            return derived
        if isinstance(node, cst.BinaryOperation):
            left, right = self._expression(node.left), self._expression(node.right)
            if left is right:
                return left
            other = node.right if left is _DERIVED else node.left
            if _is_literal_number(other):
                return _DERIVED
            raise _Escaped  # it meets a value not computed from it, which may be on the GPU
        if isinstance(node, cst.UnaryOperation):
            return self._expression(node.expression)
        if isinstance(node, cst.Comparison):
            results = [self._expression(node.left)] + [self._expression(target.comparator) for target in node.comparisons]
            if any(results) and not all(results):
                operands = [node.left] + [target.comparator for target in node.comparisons]
                if not all(derived or _is_literal_number(operand) or _is_none(operand) for derived, operand in zip(results, operands)):
                    raise _Escaped
            return any(results)
        if isinstance(node, cst.BooleanOperation):
            return self._expression(node.left) | self._expression(node.right)
        if isinstance(node, cst.IfExp):
            self._expression(node.test)
            return self._expression(node.body) | self._expression(node.orelse)
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            derived = _CLEAN
            for element in node.elements:
                value = element.value
                derived |= self._expression(value.value if isinstance(value, cst.StarredElement) else value)
            return derived
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self._expression(part.expression)
            return _CLEAN
        if self._names_derived(node):
            raise _Escaped  # comprehensions, lambdas, dicts, await...: not followed
        return _CLEAN

    def _subscript_parts(self, node: cst.Subscript, indexing_host_tensor: bool = False) -> None:
        """An index or a slice bound that is a host tensor is read on the host, whatever the
        indexed tensor's device. A host tensor itself takes only indices on the host: numbers,
        or tensors computed from the parameter (an unknown tensor index may be on the GPU)."""
        for element in node.slice:
            index = element.slice
            parts = [index.value] if isinstance(index, cst.Index) else [bound for bound in (index.lower, index.upper, index.step) if bound is not None]
            for part in parts:
                derived = self._expression(part)
                if indexing_host_tensor and not derived and not (_is_plain_value(part) or self._host_scalar(part)):
                    raise _Escaped

    def _host_scalar(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` a Python number read on the host (never a tensor)?"""
        if _is_plain_value(node) or isinstance(node, cst.Ellipsis):
            return True
        if isinstance(node, cst.Name):
            return node.value in self._numbers
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.BooleanOperation)):
            operands = [node.left, node.right] if not isinstance(node, cst.Comparison) else [node.left, *(c.comparator for c in node.comparisons)]
            return all(self._host_scalar(operand) for operand in operands)
        if isinstance(node, cst.UnaryOperation):
            return self._host_scalar(node.expression)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape":
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "ndim":
            return True
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value in ("int", "len", "round"):
                return True
            return isinstance(func, cst.Attribute) and func.attr.value in ("item", "size", "dim", "numel", "nelement")
        return False

    def _note_numbers(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name) and target.value not in self._derived:
            self._numbers.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                if isinstance(element.value, cst.Name):
                    self._note_numbers(element.value)

    def _call(self, node: cst.Call) -> bool:
        func = node.func
        arguments = [self._expression(arg.value) for arg in node.args]
        if isinstance(func, cst.Name):
            if func.value in _HOST_READ_BUILTINS:
                return _CLEAN
            if any(arguments):
                raise _Escaped
            return _CLEAN
        if isinstance(func, cst.Attribute):
            receiver = func.value
            if isinstance(receiver, cst.Name) and receiver.value == "self" and "self" not in self._derived:
                self._handed_to_own_method(func.attr.value, node, arguments)
                return _CLEAN
            receiver_derived = self._expression(receiver)
            if receiver_derived is _DERIVED:
                method = func.attr.value
                if method in _HOST_READ_METHODS:
                    return _CLEAN
                if method in _SHAPING_METHODS:
                    return _DERIVED
                if method in _ELEMENTWISE_METHODS and all(
                    derived or _is_plain_value(arg.value) or self._host_scalar(arg.value)
                    for derived, arg in zip(arguments, node.args)
                ):
                    return _DERIVED
                raise _Escaped
            if any(arguments):
                raise _Escaped
            return _CLEAN
        if any(arguments) or self._expression(func):
            raise _Escaped
        return _CLEAN

    def _handed_to_own_method(self, name: str, node: cst.Call, arguments: list[bool]) -> None:
        if not any(arguments):
            return
        method = self._find_method(name) if self._depth < _MAX_DEPTH else None
        if method is None or is_static_or_class_method(method):
            raise _Escaped
        positional = [*method.params.posonly_params, *method.params.params][1:]
        for position, (arg, derived) in enumerate(zip(node.args, arguments)):
            if not derived:
                continue
            if arg.star:
                raise _Escaped
            if arg.keyword is not None:
                parameter = arg.keyword.value
            elif position < len(positional):
                parameter = positional[position].name.value
            else:
                raise _Escaped
            if not self._reads.read_only_on_host(method, parameter, self._find_method, self._depth + 1):
                raise _Escaped

    def _names_derived(self, node: cst.CSTNode) -> bool:
        """Does ``node`` name the parameter or a local computed from it anywhere?"""
        return any(isinstance(found, cst.Name) and found.value in self._derived for found in _names_in(node))


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        stack.extend(walk.children(current))
    return found


def _takes_named(function: cst.FunctionDef, parameter: str) -> bool:
    params = function.params
    return any(param.name.value == parameter for param in (*params.posonly_params, *params.params, *params.kwonly_params))


def _is_literal_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        return _is_literal_number(node.expression)
    return isinstance(node, (cst.Integer, cst.Float))


def _is_range(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "range"


def _reads_to_python(node: cst.BaseExpression) -> bool:
    """``sizes.tolist()``, ``x.shape``, ``x.size()``: numbers (or lists of them) on the host."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "shape"
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("tolist", "size", "item")


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _is_plain_value(node: cst.BaseExpression) -> bool:
    """``1``, ``-1.0``, ``True``, ``None``: a value that is no tensor."""
    return _is_literal_number(node) or isinstance(node, cst.Name) and node.value in ("True", "False", "None")
