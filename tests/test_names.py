"""The syntactic helpers of devicelint.analysis.names."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from devicelint.analysis.names import string_value

LITERALS = [
    '"cuda"',
    "'cuda:1'",
    '""',
    "''",
    '"""two\nlines"""',
    "'''x'''",
    "r'a\\b'",
    "R'x'",
    "u'x'",
    "b'bytes'",
    "rb'\\x'",
    '"tab\\tescaped"',
    '"\\u00e9"',
]


@pytest.mark.parametrize("source", LITERALS)
def test_string_value_is_what_python_evaluates(source: str) -> None:
    node = cst.parse_expression(source)
    assert isinstance(node, cst.SimpleString)
    assert string_value(node) == ast.literal_eval(source)


def test_string_value_raises_on_a_malformed_escape_as_libcst_does() -> None:
    node = cst.parse_expression('"\\N{no such name}"')
    with pytest.raises(Exception):
        node.evaluated_value
    with pytest.raises(Exception):
        string_value(node)


def test_own_scope_calls_meets_the_calls_an_own_scope_visitor_meets() -> None:
    from devicelint.analysis.names import OwnScopeVisitor, own_scope_calls

    module = cst.parse_module(
        "def f(x, y):\n"
        "    a = g(x)[h(y)]\n"
        "    with torch.no_grad():\n"
        "        b = [k(i) for i in range(3) if m(i)]\n"
        "    def inner():\n"
        "        return hidden(x)\n"
        "    c = lambda z: hidden_too(z)\n"
        "    return {n(x): o(y)}, p(*x, **y), (await q(x)) if r(x) else s(x)\n"
    )
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)

    class Calls(OwnScopeVisitor):
        def __init__(self) -> None:
            self.calls: list[cst.Call] = []

        def visit_Call(self, node: cst.Call) -> None:
            self.calls.append(node)

    visitor = Calls()
    function.body.visit(visitor)
    walked = own_scope_calls(function.body)
    names = sorted(cst.Module([]).code_for_node(call.func) for call in walked)
    assert names == ["g", "h", "k", "m", "n", "o", "p", "q", "r", "range", "s", "torch.no_grad"]
    assert {id(call) for call in walked} == {id(call) for call in visitor.calls} and len(walked) == len(visitor.calls)
