"""Imported modules parsed with their function bodies left for later (devicelint.deferred_bodies):
a body, once read, is what parsing the whole text gives; code generation over the module gives
the text back; bodies nobody reads are never parsed; what the analysis asks of an unparsed body
(the names it assigns, its text) is what it would get from the parsed one."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from devicelint import deferred_bodies
from devicelint.analysis import helpers
from devicelint.analysis.function_text import FunctionTexts, _cst_functions
from devicelint.deferred_bodies import DeferredBlock, outermost_cst_functions, parse_deferring_bodies, python_syntax_tree
from devicelint import project
from devicelint.project import ProjectIndex
from devicelint.rules import all_rules
from devicelint.runner import lint_file

CODES = [rule.code for rule in all_rules() if rule.default_enabled]

SOURCE = '''\
"""A helper module."""
import torch


@torch.no_grad()
def decorated(x):
    # a comment first
    return x.cuda()


def one_line(x): return x.cpu()


class Net(torch.nn.Module):
    def __init__(
        self,
        device="cpu",
    ) -> None:  # the header ends here
        super().__init__()
        self.scale, (self.bias, *self.rest) = 1, (2, 3)
        for self.step in range(3): self.inside_one_line_for = 1

        def nested(y):
            return y.to(device)

        self.nested = nested
        if device:
            self.branch = 1
        elif device is None: self.one_line_elif = 2
        else:
            self.other = 3
        with torch.no_grad() as self.context:
            self.cache[0] = 4
            # a deeper comment after the last statement

    # a comment at the method's indentation
    async def later(self, x):
        text = """
a string whose lines are not indented
"""
        try:
            self.tried: int = 1
        except ValueError: self.one_line_handler = 1
        finally:
            self.total += 1
        return text
        # trailing, deeper

def choose(func, flag):
    if flag:
        # a comment, then a decorated function: the block starts on its own line
        @torch.no_grad()
        def wrapper():
            return func()

        return wrapper
    else:
        return func

if torch.cuda.is_available():
    class Inner:
        def method(self):
            return 1
else:
    def fallback():
        return 2
'''


def _deferred(text: str) -> cst.Module:
    syntax = python_syntax_tree(text)
    assert syntax is not None
    module = parse_deferring_bodies(text, syntax)
    assert module is not None
    return module


def _with_bodies(module: cst.Module) -> list[cst.FunctionDef]:
    return [function for function in outermost_cst_functions(module.body) if isinstance(function.body, cst.IndentedBlock)]


def test_bodies_are_deferred_and_one_read_parses_only_its_own():
    module = _deferred(SOURCE)
    functions = _with_bodies(module)
    assert [f.name.value for f in functions] == ["decorated", "__init__", "later", "choose", "method", "fallback"]
    assert all(isinstance(f.body, DeferredBlock) and not f.body.parsed for f in functions)
    init = functions[1]
    assert len(init.body.body) == 7
    assert init.body.parsed
    assert [f.body.parsed for f in functions] == [False, True, False, False, False, False]


def test_read_bodies_equal_the_whole_parse_and_the_code_is_the_text():
    module = _deferred(SOURCE)
    whole = cst.parse_module(SOURCE)
    ours, theirs = _with_bodies(module), _with_bodies(whole)
    for function in reversed(ours):  # any order
        function.body.body
    for mine, real in zip(ours, theirs):
        assert mine.body.header.deep_equals(real.body.header)
        assert mine.body.indent == real.body.indent
        assert len(mine.body.footer) == len(real.body.footer)
        assert all(a.deep_equals(b) for a, b in zip(mine.body.footer, real.body.footer))
        assert len(mine.body.body) == len(real.body.body)
        assert all(a.deep_equals(b) for a, b in zip(mine.body.body, real.body.body))
    assert module.code == SOURCE


@pytest.mark.parametrize(
    "text",
    [
        SOURCE.replace("    ", "\t"),  # tabs
        "if True:\n  x = 1\nclass A:\n    def f(self):\n        return 1\n\n    def g(self):\n            return 2\n",  # odd indents
        "def f():\n    return 1",  # no newline at the end
        "if 1:\n    x = 1\nclass A:\n  def f(self):\n    return 1\n  def g(self):\n    return 2\n",  # parsed whole
    ],
)
def test_unusual_layouts_still_give_the_text_back(text):
    module = _deferred(text)
    whole = _with_bodies(cst.parse_module(text))
    for function, real in zip(_with_bodies(module), whole):
        assert len(function.body.body) == len(real.body.body)
        assert all(a.deep_equals(b) for a, b in zip(function.body.body, real.body.body))
    assert module.code == text


def test_texts_ast_cannot_share_line_numbers_with_are_parsed_whole():
    for text in ("def f():\r\n    return 1\r\n", "def f():\n    return 1\n\x0c\n"):
        syntax = python_syntax_tree(text)
        assert syntax is not None
        assert parse_deferring_bodies(text, syntax) is None


def test_assigned_names_and_ending_of_an_unparsed_body_are_those_of_the_parsed_one():
    module = _deferred(SOURCE)
    for function in _with_bodies(module):
        unparsed = helpers.assigned_in(function), helpers.ending_and_assigned(function)
        assert not function.body.parsed
        statements = helpers.body_statements(function)
        parsed = helpers.assigned_names(statements), (helpers.may_fall_off_end(statements), helpers.assigned_names(statements))
        assert unparsed == parsed, function.name.value
    assert [helpers.may_fall_off_end(helpers.body_statements(f)) for f in _with_bodies(module)] == [False, True, False, False, False, False]
    init = _with_bodies(module)[1]
    names = helpers.assigned_in(init)
    assert {"self.scale", "self.bias", "self.rest", "self.step", "self.branch", "self.other", "self.context", "self.cache"} <= names
    # libcst makes a body on its header's line a SimpleStatementSuite, read as a line: its
    # assignments count, in the parsed body and in Python's tree of the unparsed one alike
    assert {"self.inside_one_line_for", "self.one_line_elif"} <= names


ONE_LINE_BLOCKS = '''\
import torch


def either(x, gpu):
    if gpu: return x.cuda()
    else: return x


def chain(x, gpu):
    if gpu: return x.cuda()
    elif x.is_cuda: y = x; return y
    else: raise ValueError(x)


def guarded(x):
    with torch.no_grad(): return x.cuda()


def half(x, gpu):
    if gpu: return x.cuda()
    else: x = x.float()


def loop(xs):
    for x in xs: last = x.cuda()
    while xs: xs = xs[1:]
    try: moved = xs.cuda()
    except AttributeError: failed = True
    return last
'''


def test_one_line_blocks_end_and_bind_alike_in_an_unparsed_and_a_parsed_body():
    module = _deferred(ONE_LINE_BLOCKS)
    functions = _with_bodies(module)
    unparsed = [helpers.ending_and_assigned(function) for function in functions]
    assert not any(function.body.parsed for function in functions)
    parsed = []
    for function in functions:
        statements = helpers.body_statements(function)
        parsed.append((helpers.may_fall_off_end(statements), helpers.assigned_names(statements)))
    assert unparsed == parsed
    assert [ending for ending, _ in parsed] == [False, False, False, True, False]
    assert parsed[1][1] == {"y"} and parsed[3][1] == {"x"}
    assert parsed[4][1] == {"x", "last", "xs", "moved", "failed"}


def test_function_texts_of_a_deferred_module_are_those_of_the_whole_parse():
    module = _deferred(SOURCE)
    whole = cst.parse_module(SOURCE)
    texts, reference = FunctionTexts(module, SOURCE), FunctionTexts(whole, SOURCE)
    ours, theirs = _with_bodies(module), _with_bodies(whole)
    for mine, real in zip(ours, theirs):
        assert texts.body(mine) == reference.body(real) is not None
    assert not any(f.body.parsed for f in ours)
    init = ours[1]
    nested = [f for f in _cst_functions(init.body.body) if f.name.value == "nested"][0]
    real_nested = [f for f in _cst_functions(theirs[1].body.body) if f.name.value == "nested"][0]
    assert texts.body(nested) == reference.body(real_nested) == "            return y.to(device)\n"


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(
        textwrap.dedent(
            """\
            import torch


            def make_mask(n):
                return torch.ones(n)


            def never_called(n):
                return torch.zeros(n).cuda()
            """
        )
    )
    train = tmp_path / "train.py"
    train.write_text(
        textwrap.dedent(
            """\
            import torch
            from helpers import make_mask

            x = torch.randn(4).cuda()
            y = x * make_mask(4)
            """
        )
    )
    return train


def test_a_project_module_is_read_whole_only_where_used(tmp_path):
    train = _project(tmp_path)
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import torch\nfrom helpers import make_mask\n\nmask = make_mask(4)\nprint(torch.sum(mask))\n")
    index = ProjectIndex()
    assert lint_file(quiet, CODES, project=index)[0] == []
    helper = index.parsed(tmp_path / "helpers.py")
    assert helper is not None and not helper.complete
    called, unused = _with_bodies(helper.tree)
    assert called.body.parsed and not unused.body.parsed
    # a message placing a node of helpers.py generates its code: then all of it is parsed
    findings = lint_file(train, CODES, project=index)[0]
    assert [(f.line, f.code) for f in findings] == [(5, "DL201")]
    assert findings == lint_file(train, CODES, project=ProjectIndex())[0]
    assert lint_file(train, CODES, project=None)[0] == []  # the finding needs make_mask's body


def test_a_linted_file_read_before_as_a_dependency_is_parsed_whole(tmp_path):
    train = _project(tmp_path)
    index = ProjectIndex()
    lint_file(train, CODES, project=index)
    helper = tmp_path / "helpers.py"
    assert index.tree_for(helper.resolve(), helper.read_text()) is None
    findings, _, _ = lint_file(helper, CODES, project=index)
    assert findings == lint_file(helper, CODES, project=ProjectIndex())[0]


# ---------------------------------------------------------------- a libcst that does not fit
# Deferring fills the slots of libcst's IndentedBlock, which is its layout, not its API: a
# release that changes it must make devicelint parse modules whole, never crash or change a
# finding.


def test_the_installed_libcst_is_fit_for_deferring():
    # were this to fail after a libcst upgrade, devicelint still works (parsing modules whole,
    # as the tests below check), only slower: look at what libcst changed in IndentedBlock
    assert deferred_bodies.field_slots(cst.IndentedBlock) is not None
    assert deferred_bodies.deferring_works()
    assert deferred_bodies.probe_deferring(SOURCE)


def test_a_block_class_laid_out_otherwise_is_found_unfit():
    class FieldsInADict(cst.IndentedBlock):  # a subclass without __slots__: no slots of its own
        pass

    @dataclasses.dataclass(frozen=True)
    class OneMoreField(cst.IndentedBlock):
        annotation: object = None

    assert deferred_bodies.field_slots(FieldsInADict) is None
    assert deferred_bodies.field_slots(OneMoreField) is None
    assert deferred_bodies.field_slots(object) is None  # not a dataclass


def test_a_libcst_that_misbehaves_on_the_probe_turns_deferring_off(monkeypatch):
    def broken(bodies, block):
        raise AttributeError("a slot libcst no longer has")

    with monkeypatch.context() as patch:
        patch.setattr(deferred_bodies._DeferredBodies, "materialize", broken)
        assert not deferred_bodies.probe_deferring(SOURCE)

    def wrong_body(block, real):
        for name in deferred_bodies._FIELDS:
            deferred_bodies._SLOTS[name].__set__(block, getattr(block._placeholder, name))
        object.__setattr__(block, "_ready", True)

    with monkeypatch.context() as patch:
        patch.setattr(deferred_bodies, "_fill", wrong_body)  # a body that is not the function's
        assert not deferred_bodies.probe_deferring(SOURCE)
    assert deferred_bodies.probe_deferring(SOURCE)


def test_without_the_slots_nothing_is_deferred(monkeypatch):
    monkeypatch.setattr(deferred_bodies, "_SLOTS", None)
    unchecked = deferred_bodies.deferring_works.__wrapped__  # the check, not its answer kept for the process
    assert not unchecked()
    monkeypatch.setattr(deferred_bodies, "deferring_works", unchecked)
    syntax = python_syntax_tree(SOURCE)
    assert syntax is not None and parse_deferring_bodies(SOURCE, syntax) is None


def test_where_deferring_does_not_work_modules_are_parsed_whole_with_the_same_findings(tmp_path, monkeypatch):
    train = _project(tmp_path)
    deferring = ProjectIndex()
    expected = lint_file(train, CODES, project=deferring)[0]
    assert not deferring.parsed(tmp_path / "helpers.py").complete
    monkeypatch.setattr(deferred_bodies, "deferring_works", lambda: False)
    monkeypatch.setattr(project, "deferring_works", lambda: False)
    whole = ProjectIndex()
    findings = lint_file(train, CODES, project=whole)[0]
    helper = whole.parsed(tmp_path / "helpers.py")
    assert helper is not None and helper.complete
    assert helper.syntax_tree is None  # as before deferring: no ast parse up front
    assert not any(isinstance(f.body, DeferredBlock) for f in _with_bodies(helper.tree))
    assert findings == expected and [(f.line, f.code) for f in findings] == [(5, "DL201")]


def test_a_dependency_the_batch_will_lint_is_parsed_whole_and_linted_without_a_second_parse(tmp_path):
    train = _project(tmp_path)
    helper = tmp_path / "helpers.py"
    index = ProjectIndex(batch=[train, helper])
    expected = lint_file(train, CODES, project=ProjectIndex())[0]
    assert lint_file(train, CODES, project=index)[0] == expected
    parsed = index.parsed(helper.resolve())
    assert parsed is not None and parsed.complete
    assert not any(isinstance(f.body, DeferredBlock) for f in _with_bodies(parsed.tree))
    assert index.tree_for(helper.resolve(), helper.read_text()) is parsed.tree
    assert lint_file(helper, CODES, project=index)[0] == lint_file(helper, CODES, project=ProjectIndex())[0]


def test_a_dependency_of_the_batch_that_will_not_be_linted_whole_keeps_its_bodies_deferred(tmp_path):
    # a batch file that never mentions PyTorch is not parsed when linted: as a dependency it is
    # parsed as any other, its bodies left for when they are read
    train = _project(tmp_path)
    shapes = tmp_path / "shapes.py"
    shapes.write_text("def area(width, height):\n    return width * height\n")
    (tmp_path / "train.py").write_text(train.read_text() + "from shapes import area\nz = area(2, 3)\n")
    index = ProjectIndex(batch=[train, shapes])
    expected = lint_file(train, CODES, project=ProjectIndex())[0]
    assert lint_file(train, CODES, project=index)[0] == expected
    parsed = index.parsed(shapes.resolve())
    assert parsed is not None and not parsed.complete
    assert lint_file(shapes, CODES, project=index)[0] == []


def test_a_package_submodule_is_looked_for_once(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "losses.py").write_text("")
    index = ProjectIndex()
    looked = []
    real = project._module_file
    monkeypatch.setattr(project, "_module_file", lambda folder, parts: looked.append(parts) or real(folder, parts))
    first = index.submodule(package / "__init__.py", "losses")
    assert first == package / "losses.py"
    assert index.submodule(package / "__init__.py", "losses") == first
    assert index.submodule(package / "__init__.py", "missing") is None
    assert index.submodule(package / "__init__.py", "missing") is None
    assert looked == [["losses"], ["missing"]]
