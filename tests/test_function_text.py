"""Function texts cut from the file's text (devicelint.analysis.function_text) say what
regenerating them from the tree says, and give up (None) where they cannot."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from devicelint.analysis.function_text import FunctionTexts, _cst_functions

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SOURCE = '''\
import torch


@torch.no_grad()
@staticmethod
def decorated(x):
    return x.cuda()


class Net(torch.nn.Module):
    def __init__(
        self,
        device="cpu",
    ) -> None:  # the header ends here
        # a comment before the first statement
        super().__init__()

        def nested(y):
            return y.to(device)

        self.nested = nested

    def one_line(self, x): return x.cpu()


if torch.cuda.is_available():
    def helper(z):
        return z.numpy()
else:
    async def helper(z):
        return z
'''


def _functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    return {f"{function.name.value}@{index}": function for index, function in enumerate(_cst_functions(module.body))}


def _significant(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_bodies_and_definitions_are_cut_from_the_text() -> None:
    module = cst.parse_module(SOURCE)
    texts = FunctionTexts(module, SOURCE)
    functions = _functions(module)
    assert list(functions) == ["decorated@0", "__init__@1", "nested@2", "one_line@3", "helper@4", "helper@5"]
    assert texts.body(functions["decorated@0"]) == "    return x.cuda()\n"
    assert texts.whole(functions["decorated@0"]) == "@torch.no_grad()\n@staticmethod\ndef decorated(x):\n    return x.cuda()\n"
    init_body = texts.body(functions["__init__@1"])
    assert init_body is not None
    assert init_body.startswith("        # a comment before the first statement\n        super().__init__()\n")
    assert init_body.endswith("        self.nested = nested\n")
    assert "device=" not in init_body  # the multi-line header is not part of the body
    assert texts.body(functions["nested@2"]) == "            return y.to(device)\n"
    assert texts.body(functions["helper@4"]) == "        return z.numpy()\n"
    assert texts.body(functions["helper@5"]) == "        return z\n"


def test_a_body_on_the_header_line_is_not_cut() -> None:
    module = cst.parse_module(SOURCE)
    assert FunctionTexts(module, SOURCE).body(_functions(module)["one_line@3"]) is None


def test_nothing_is_cut_when_the_text_is_not_the_trees() -> None:
    module = cst.parse_module(SOURCE)
    other_text = SOURCE.replace("def nested(y)", "def renamed(y)")
    texts = FunctionTexts(module, other_text)
    assert all(texts.body(function) is None for function in _functions(module).values())
    carriage_returns = SOURCE.replace("\n", "\r\n")
    module = cst.parse_module(carriage_returns)
    assert all(FunctionTexts(module, carriage_returns).body(function) is None for function in _functions(module).values())


def test_cut_texts_say_what_regenerated_texts_say_on_every_fixture() -> None:
    compared = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        module = cst.parse_module(text)
        texts = FunctionTexts(module, text)
        for function in _cst_functions(module.body):
            body = texts.body(function)
            if body is None:
                continue
            compared += 1
            assert _significant(body) == _significant(module.code_for_node(function.body)), (path, function.name.value)
            whole = texts.whole(function)
            assert whole is not None and _significant(whole) == _significant(module.code_for_node(function)), (path, function.name.value)
    assert compared > 200
