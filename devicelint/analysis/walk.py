"""A read-only walk of a libcst tree that calls a ``cst.CSTVisitor``'s hooks as
``node.visit(visitor)`` does, several times faster.

libcst's ``visit`` is built for transformers: it rebuilds every node it passes (about half a
parse's worth of allocation for a whole module, measured on timm), and it visits every piece
of whitespace, punctuation and every operator too. The analysis and the rules only read the
tree, and walk function bodies many times per file (a body per rule question), so together
those walks cost about as much as the analysis proper. ``visit`` here calls the same hooks
(``visit_<Node>`` — a False result skips the children — then ``leave_<Node>``, or an
overridden ``on_visit``/``on_leave``) on the same nodes in the same order, rebuilding
nothing, and leaves out only the nodes that hold no code: whitespace, comments, newlines,
punctuation, brackets and operators (a hook on one of those is never called; none of
devicelint's visitors has one).

The order of a node's children is the order libcst's own ``_visit_and_replace_children``
visits them in (a decorator before the ``def``, an argument's keyword before its value), read
once per node type from that method's source; where libcst is installed without its source,
``visit`` hands the walk to libcst itself (correct, slower), and ``children`` keeps the
dataclass field order, which differs from libcst's only for a few node types.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
from typing import Callable, Optional

import libcst as cst

#: nodes that hold no code: a walk neither calls hooks on them nor enters them
_LAYOUT_NODES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.Comment, cst.Newline, cst.TrailingWhitespace,
    cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.Asynchronous,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
    cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp,
)
_VISITED_FIELD = re.compile(r'visit_\w+\(\s*self\s*,\s*"(\w+)"')

_Hook = Optional[Callable[[cst.CSTVisitor, cst.CSTNode], Optional[bool]]]
#: per node type: the fields that can hold code, in libcst's visiting order
_CODE_FIELDS: dict[type, tuple[str, ...]] = {}
#: per value type: is it a node that holds code (entered by a walk)?
_HOLDS_CODE: dict[type, bool] = {}
#: per visitor class, per node type: its visit and leave hooks
_HOOKS: dict[type, dict[type, tuple[_Hook, _Hook]]] = {}


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads the tree (see the module's docs)."""
    if not _libcst_order_readable():
        node.visit(visitor)  # the order of children is not known: libcst's own (slower) walk
        return
    kind = type(visitor)
    if kind.on_visit is cst.CSTVisitor.on_visit and kind.on_leave is cst.CSTVisitor.on_leave:
        hooks = _HOOKS.get(kind)
        if hooks is None:
            hooks = _HOOKS[kind] = {}
        _walk_hooks(node, visitor, hooks)
    else:
        _walk_overridden(node, visitor)


def _walk_hooks(node: cst.CSTNode, visitor: cst.CSTVisitor, hooks: dict[type, tuple[_Hook, _Hook]]) -> None:
    kind = type(node)
    pair = hooks.get(kind)
    if pair is None:
        name = kind.__name__
        pair = hooks[kind] = (getattr(type(visitor), f"visit_{name}", None), getattr(type(visitor), f"leave_{name}", None))
    enter, leave = pair
    if enter is None or enter(visitor, node) is not False:
        for child in children(node):
            _walk_hooks(child, visitor, hooks)
    if leave is not None:
        leave(visitor, node)


def _walk_overridden(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    if visitor.on_visit(node):
        for child in children(node):
            _walk_overridden(child, visitor)
    visitor.on_leave(node)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of ``node`` that hold code, in the order libcst visits them."""
    kind = type(node)
    fields = _CODE_FIELDS.get(kind)
    if fields is None:
        fields = _CODE_FIELDS[kind] = _code_fields(kind)
    # the hottest loop of a lint (every walk of every body passes here): the per-type answer
    # of _holds_code is read from its dict inline, asked of the function only the first time
    known = _HOLDS_CODE
    children = []
    for field in fields:
        value = getattr(node, field)
        kind = type(value)
        if kind is list or kind is tuple:
            for item in value:
                holds = known.get(type(item))
                if holds is None:
                    holds = _holds_code(type(item))
                if holds:
                    children.append(item)
        else:
            holds = known.get(kind)
            if holds is None:
                holds = _holds_code(kind)
            if holds:
                children.append(value)
    return children


def contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is ``node`` ``root`` itself or inside it (among the children that hold code)?"""
    stack = [root]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(children(current))
    return False


def _holds_code(kind: type) -> bool:
    holds = _HOLDS_CODE.get(kind)
    if holds is None:
        holds = _HOLDS_CODE[kind] = issubclass(kind, cst.CSTNode) and not issubclass(kind, _LAYOUT_NODES)
    return holds


@functools.lru_cache(maxsize=None)
def _libcst_order_readable() -> bool:
    """Can libcst's child order be read from its source (not where it is installed compiled
    only)? Asked once per process."""
    try:
        return "decorators" in _VISITED_FIELD.findall(inspect.getsource(cst.FunctionDef._visit_and_replace_children))
    except (OSError, TypeError):
        return False


def _code_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold code, in the order libcst visits them."""
    fields = [field.name for field in dataclasses.fields(kind)]
    try:
        visited = _VISITED_FIELD.findall(inspect.getsource(kind._visit_and_replace_children))
    except (OSError, TypeError):
        visited = []
    order = list(dict.fromkeys(name for name in visited if name in fields))
    order += [name for name in fields if name not in order]  # not visited by libcst: never a node
    return tuple(name for name in order if not name.startswith("whitespace") and name not in _LAYOUT_FIELD_NAMES)


#: fields that only ever hold layout (checked again per value: a node of _LAYOUT_NODES is skipped)
_LAYOUT_FIELD_NAMES = frozenset(
    {"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header", "footer", "newline",
     "trailing_whitespace", "equal", "colon", "dot", "operator", "asynchronous", "lbracket", "rbracket", "lbrace",
     "rbrace", "first_colon", "second_colon", "leading_whitespace", "indent", "encoding", "default_indent",
     "default_newline", "has_trailing_newline"}
)
