"""devicelint.analysis.walk.visit calls a visitor's hooks on the same code nodes, in the same
order, as libcst's own ``node.visit``: checked against libcst on real source (the fixtures and
a slice of the real-bug corpus) and on a text that has every kind of statement."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import libcst as cst
import pytest

from devicelint.analysis import walk
from devicelint.deferred_bodies import parse_deferring_bodies, python_syntax_tree

ROOT = Path(__file__).resolve().parent.parent

#: every statement and expression form whose children libcst visits in an order of its own
EVERY_FORM = '''
import os, sys as system
from . import sibling
from .. pkg import (a as b, c)
from x import *

@decorate(1, key=2)
@other
class Model(Base, metaclass=Meta):
    """doc"""
    size: int = 3

    @property
    async def forward(self, x, /, y: "T" = 1, *args, z=2, **kwargs) -> "R":
        global counter
        nonlocal_value = [i for i in range(3) if i if not i]
        table = {k: v for k, v in items() if k}
        values = {v for v in x}, (g for g in x)
        async with lock() as held, other():
            async for item in stream():
                await item
        try:
            pass
        except (ValueError, KeyError) as error:
            raise RuntimeError("no") from error
        else:
            pass
        finally:
            del table[0], values
        while x < 3 > y:
            x += 1
            break
        else:
            continue
        assert x, f"x={x!r:>{width}} and {y=}"
        lam = lambda p, *q, r=1: p + q[1:2:3] - r[...]
        return (yield from x) if x is not None else (yield)


def plain(a, b=lambda: 0, *, c):
    match a:
        case [1, *rest] if rest:
            return rest
        case {"k": v, **others}:
            return others
        case Point(x=0, y=yy) | None:
            return yy
        case _:
            return a @ b ** c // -a
    print(not a and b or c, a if b else c, *a, **b)
    x: list[int]
    x = y = z = a[b, c:d]
    (w := 3)
'''


class _EverythingSeen(cst.CSTVisitor):
    """Records every code node it meets, on entry and on leaving (an overridden on_visit)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if walk._holds_code(type(node)):
            self.seen.append(("enter " + type(node).__name__, id(node)))
        return not isinstance(node, cst.Lambda)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if walk._holds_code(type(original_node)):
            self.seen.append(("leave " + type(original_node).__name__, id(original_node)))


class _SomeHooks(cst.CSTVisitor):
    """visit_/leave_ hooks, one of which skips the children of functions of 3+ parameters."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.seen.append(("call", id(node)))

    def visit_Name(self, node: cst.Name) -> None:
        self.seen.append(("name " + node.value, id(node)))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        self.seen.append(("def " + node.name.value, id(node)))
        return len(node.params.params) < 3

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.seen.append(("end " + original_node.name.value, id(original_node)))

    def visit_Arg(self, node: cst.Arg) -> None:
        self.seen.append(("arg", id(node)))


def _same_as_libcst(module: cst.Module) -> None:
    for visitor_class in (_EverythingSeen, _SomeHooks):
        by_libcst, by_walk = visitor_class(), visitor_class()
        module.visit(by_libcst)
        walk.visit(module, by_walk)
        assert by_walk.seen == by_libcst.seen
        assert by_walk.seen  # the comparison is about something


def test_every_form_is_walked_as_libcst_visits_it() -> None:
    _same_as_libcst(cst.parse_module(EVERY_FORM))


def _sources() -> list[Path]:
    fixtures = sorted((ROOT / "fixtures").rglob("*.py"))
    corpus = sorted((ROOT / "bench" / "realbugs").glob("*.py"))[::6]
    return fixtures + corpus


@pytest.mark.parametrize("path", _sources(), ids=lambda path: str(path.relative_to(ROOT)))
def test_real_source_is_walked_as_libcst_visits_it(path: Path) -> None:
    _same_as_libcst(cst.parse_module(path.read_text(encoding="utf-8")))


def test_a_deferred_body_is_parsed_and_walked_like_a_parsed_one() -> None:
    text = "def f(x):\n    return g(x)\n\n\nclass C:\n    def m(self):\n        return h(self)\n"
    syntax = python_syntax_tree(text)
    assert syntax is not None
    deferred = parse_deferring_bodies(text, syntax)
    if deferred is None:
        pytest.skip("this libcst cannot defer bodies")
    by_walk, by_libcst = _SomeHooks(), _SomeHooks()
    walk.visit(deferred, by_walk)
    cst.parse_module(text).visit(by_libcst)
    assert [what for what, _ in by_walk.seen] == [what for what, _ in by_libcst.seen]
    assert ("call", id(deferred.body[0].body.body[0].body[0].value)) in by_walk.seen


def test_nodes_without_code_are_not_visited() -> None:
    class Punctuation(cst.CSTVisitor):
        def __init__(self) -> None:
            self.commas = 0

        def visit_Comma(self, node: cst.Comma) -> None:
            self.commas += 1

    module = cst.parse_module("f(a, b, c)\n")
    by_libcst, by_walk = Punctuation(), Punctuation()
    module.visit(by_libcst)
    walk.visit(module, by_walk)
    assert (by_libcst.commas, by_walk.commas) == (2, 0)


def test_children_follow_libcst_order_where_it_differs_from_the_fields() -> None:
    assert walk._code_fields(cst.FunctionDef).index("decorators") < walk._code_fields(cst.FunctionDef).index("name")
    assert walk._code_fields(cst.Arg).index("keyword") < walk._code_fields(cst.Arg).index("value")
    assert walk._code_fields(cst.IfExp)[:3] == ("body", "test", "orelse")


def test_without_libcst_source_the_walk_is_libcst_own(monkeypatch) -> None:
    """Where libcst's child order cannot be read (installed compiled only), visiting falls back
    to libcst's own walk: the same hooks in the same order, only slower."""
    monkeypatch.setattr(walk, "_libcst_order_readable", lambda: False)
    module = cst.parse_module(EVERY_FORM)
    by_libcst, by_walk = _SomeHooks(), _SomeHooks()
    module.visit(by_libcst)
    walk.visit(module, by_walk)
    assert by_walk.seen == by_libcst.seen and by_walk.seen


def test_the_analysis_and_rules_never_ask_libcst_nodes_for_their_children() -> None:
    # libcst's own `node.children` rebuilds the node through its visitor machinery (a copy,
    # validated) every time it is read: walking a function with it cost a quarter of the whole
    # run on timm. `walk.children` reads the fields instead.
    package = Path(__file__).resolve().parent.parent / "devicelint"
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            if re.search(r"(?<!walk)\.children\b(?!\s*\()", code):
                offenders.append(f"{path.relative_to(package)}:{number}: {line.strip()}")
    assert offenders == []
