"""Small syntactic helpers shared by the analysis and the rules."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

_DTYPE_LIKE_NAME = re.compile(r"^(dtype|.+_dtype|dtype_.+)$", re.IGNORECASE)


def dotted_name(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


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
