"""Small syntactic helpers shared by the analysis and the rules."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis import walk

_DTYPE_LIKE_NAME = re.compile(r"^(dtype|.+_dtype|dtype_.+)$", re.IGNORECASE)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    # exact type tests: libcst's node classes are ABCs, whose isinstance is several times
    # slower, and this runs for most expressions the analysis meets
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def string_value(node: cst.SimpleString) -> "str | bytes":
    """What a string literal evaluates to, as ``SimpleString.evaluated_value`` gives it, without
    its ``ast.literal_eval`` (a compile per string, the most of what evaluating a file's strings
    cost) when the text has no escape to decode: then the value is the text between the quotes.
    Raises what ``evaluated_value`` raises for a malformed literal."""
    text = node.value
    if "\\" in text or "\r" in text or "b" in node.prefix:
        return node.evaluated_value
    return node.raw_value


def constant_key(node: cst.Subscript) -> Optional[str]:
    """``"device"`` for ``cfg["device"]``: the one string literal a subscript indexes by; None
    for any other index (a name, a number, a slice, several)."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    index = node.slice[0].slice.value
    if not isinstance(index, cst.SimpleString):
        return None
    try:
        key = string_value(index)
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None


def has_decorator(node: cst.FunctionDef, name: str) -> bool:
    """Is the function decorated ``@name`` (``staticmethod``, ``classmethod``)?"""
    return any(dotted_name(decorator.decorator) == name for decorator in node.decorators)


def is_static_or_class_method(node: cst.FunctionDef) -> bool:
    """A static or class method: its first parameter is not the instance."""
    return has_decorator(node, "staticmethod") or has_decorator(node, "classmethod")


def parameter_names(function: cst.FunctionDef) -> frozenset[str]:
    """The names of ``function``'s positional and keyword parameters (not ``*args``/``**kwargs``)."""
    params = function.params
    return frozenset(param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params))


def last_identifier(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def looks_like_dtype_name(node: cst.BaseExpression) -> bool:
    identifier = last_identifier(node)
    return identifier is not None and bool(_DTYPE_LIKE_NAME.match(identifier))


def keyword_arg(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional_args(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def bound_names(target: cst.BaseExpression) -> set[str]:
    """The names and dotted names an assignment target binds (``a, (b, *c) = ...`` gives a, b
    and c; ``self.x = ...`` gives self.x); a subscript binds none."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in bound_names(element.value)}
    name = dotted_name(target)
    return {name} if name is not None else set()


class NamesRead(cst.CSTVisitor):
    """The names and dotted names an expression reads (``h``, ``self.cache``), as nodes; inside
    lambdas too unless ``into_lambdas`` is False."""

    def __init__(self, into_lambdas: bool = True) -> None:
        self.nodes: list[cst.BaseExpression] = []
        self.into_lambdas = into_lambdas

    def visit_Name(self, node: cst.Name) -> None:
        self.nodes.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if dotted_name(node) is not None:
            self.nodes.append(node)
            return False
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return self.into_lambdas


class OwnScopeVisitor(cst.CSTVisitor):
    """A visitor of one function body that does not enter the functions, classes and lambdas
    nested in it: what they hold runs in scopes of their own."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


#: nodes that open a scope of their own, which a walk of one body does not enter
_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def own_scope_calls(body: cst.CSTNode) -> list[cst.Call]:
    """The calls in ``body``, in the order OwnScopeVisitor meets them, not entering the
    functions, classes and lambdas nested in it (a walk of the code children only: see
    devicelint.analysis.walk)."""
    calls: list[cst.Call] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call:
            calls.append(node)
        stack.extend(child for child in reversed(walk.children(node)) if type(child) not in _OWN_SCOPES)
    return calls


def suite_statements(suite: cst.BaseSuite) -> tuple[cst.BaseStatement, ...]:
    """The statements of an indented block; none for a block written on its header's line
    (``if x: y = 1``), whose small statements hold no definitions."""
    return tuple(suite.body) if isinstance(suite, cst.IndentedBlock) else ()
