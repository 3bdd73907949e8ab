"""Imported project modules parsed with their function bodies left for later.

Running another module of the project (devicelint.analysis.project_imports) executes its
top-level statements and class bodies; a function's body is read only when the function is
summarised for a call, its text asked for, or a message places one of its nodes. Most functions
of an imported module are never asked for (a test file imports a dozen helpers and calls two),
yet the bodies are most of a module's text, and libcst's parse costs in proportion to it.

So a dependency is parsed in two steps. Python's own ``ast`` (a tenth of libcst's time) finds
every function that is not inside another one and whose body starts on a line of its own; libcst
then parses a skeleton of the text in which each such body is a single ``...`` line, and each of
those functions gets a ``DeferredBlock`` as its body. The first time anything reads one of that
block's fields (``body``, ``header``, ``indent``, ``footer``: the analysis, a visitor, code
generation), the function's own lines are parsed, with just enough around them for libcst to see
them as in the module (see ``_DeferredBodies._parse_alone``), and its real block is put in place.
The function node keeps its identity, so what the analysis keyed on it stays valid, and code
generation over the module reproduces the original text (positions in messages are computed
that way).

Where the function's lines cannot be parsed that way (an indentation that is not the module's
default one plus more, a parse that fails or sees another default indentation), the whole text
is parsed once and the blocks that need it are taken from it. A text ``ast`` cannot parse, or
one with characters whose line counting could differ between the two parsers (``\\r``, form
feeds), is not deferred: the caller parses it whole, as before. A body libcst refuses where
``ast`` accepted it (no case known) keeps the skeleton's ``...``.

A deferred block stands in for libcst's ``IndentedBlock`` by filling the slots that hold its
fields, which is libcst's layout, not its API. So nothing is deferred unless the installed
libcst is checked, once per process, to be laid out and to behave as this module expects
(``deferring_works``); where it is not, modules are parsed whole, as they were before.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import types
import warnings
from typing import Callable, Iterator, Optional, Union

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.names import suite_statements

_AstFunction = Union[ast.FunctionDef, ast.AsyncFunctionDef]
#: ``match`` and ``try ... except*`` exist in Python's ``ast`` from 3.10 and 3.11 on
_AST_MATCH = getattr(ast, "Match", ())
_AST_TRY_STAR = getattr(ast, "TryStar", ())

#: IndentedBlock's fields: a deferred block fills them when its body is parsed
_FIELDS = ("body", "header", "indent", "footer")


def field_slots(block_class: type) -> Optional[dict[str, types.MemberDescriptorType]]:
    """The slots holding ``block_class``'s fields, where it is laid out as libcst 1.1 to 1.9
    lay ``IndentedBlock`` out: a dataclass with exactly ``_FIELDS``, each kept in a slot. None
    otherwise (fields kept elsewhere, one more field that a deferred block would leave unset):
    bodies are then not deferred, and modules are parsed whole."""
    try:
        names = sorted(field.name for field in dataclasses.fields(block_class))
    except TypeError:  # not a dataclass
        return None
    if names != sorted(_FIELDS):
        return None
    slots = {}
    for name in names:
        slot = block_class.__dict__.get(name)
        if not isinstance(slot, types.MemberDescriptorType):
            return None
        slots[name] = slot
    return slots


_SLOTS = field_slots(cst.IndentedBlock)


def _slot_property(name: str) -> property:
    slot = _SLOTS[name] if _SLOTS is not None else None

    def read(block: "DeferredBlock") -> object:
        if not block._ready:
            block._bodies.materialize(block)
        return slot.__get__(block)  # type: ignore[union-attr]

    def write(block: "DeferredBlock", value: object) -> None:
        slot.__set__(block, value)  # type: ignore[union-attr]

    return property(read, write)


class DeferredBlock(cst.IndentedBlock):
    """A function's body not parsed yet: any of its fields, when first read, parses it. (Made
    only where ``deferring_works()``; the class itself reads no libcst internals.)"""

    __slots__ = ("_bodies", "_name", "_where", "_position", "_ready", "_placeholder", "_syntax")

    body = _slot_property("body")  # type: ignore[assignment]
    header = _slot_property("header")  # type: ignore[assignment]
    indent = _slot_property("indent")  # type: ignore[assignment]
    footer = _slot_property("footer")  # type: ignore[assignment]

    @property
    def parsed(self) -> bool:
        """Whether the body has been parsed (reading this parses nothing)."""
        return self._ready

    @property
    def syntax(self) -> _AstFunction:
        """The function as Python's ``ast`` parsed it (reading this parses nothing)."""
        return self._syntax

    @property
    def lines(self) -> list[str]:
        """The lines of the module's text, each with its ``\\n``, as ``ast`` numbers them."""
        return self._bodies.lines


# libcst's visitors call visit_<class name>: a deferred block is visited as any IndentedBlock
DeferredBlock.__name__ = DeferredBlock.__qualname__ = "IndentedBlock"


def unparsed_body(function: cst.FunctionDef) -> Optional[DeferredBlock]:
    """The function's body when it is deferred and not parsed yet (asking parses nothing)."""
    body = function.body
    return body if isinstance(body, DeferredBlock) and not body._ready else None


#: a text that meets every way a body is cut out and put back: a decorated function, a
#: method after a comment, a nested function, an async one, a string spanning lines, a
#: function inside an `if`, a last function without a newline at the end
_PROBE = '''\
import functools


@functools.lru_cache()
def decorated(x):
    # a comment first
    return x


class Holder:
    def __init__(self, value=1):
        self.value = value

        def nested(y):
            return y

        self.nested = nested

    # a comment at the method's indentation
    async def later(self):
        text = """
not indented
"""
        return text
        # trailing, deeper

if True:
    def inside_if():
        pass
def last(): return 1
def final():
    return 2'''


@functools.lru_cache(maxsize=None)
def deferring_works() -> bool:
    """Whether the installed libcst lets bodies be deferred (checked once per process, in a few
    milliseconds): its ``IndentedBlock`` is laid out as ``field_slots`` expects, and a probe
    text deferred, visited by a libcst visitor, and generated back gives what parsing it whole
    gives. Where it does not, every module is parsed whole, as before bodies were deferred: a
    libcst release that changes what this module relies on makes devicelint slower, never
    wrong, and never crash."""
    return _SLOTS is not None and probe_deferring(_PROBE)


def probe_deferring(text: str) -> bool:
    """Whether deferring ``text``'s bodies, then reading them, gives what parsing it whole does."""
    try:
        syntax = python_syntax_tree(text)
        whole = cst.parse_module(text)
        deferred = _parse_deferring(text, syntax) if syntax is not None else None
        if deferred is None:
            return False
        blocks = [function.body for function in outermost_cst_functions(deferred.body)]
        if not all(unparsed_body(function) is not None for function in outermost_cst_functions(deferred.body) if _has_own_lines(function)):
            return False
        visited = _count_blocks(deferred)  # parses every body, through its fields
        if visited != _count_blocks(whole) or not all(not isinstance(block, DeferredBlock) or block.parsed for block in blocks):
            return False
        if deferred.code != text:
            return False
        theirs = list(outermost_cst_functions(whole.body))
        return len(blocks) == len(theirs) and all(_same_suite(mine, real.body) for mine, real in zip(blocks, theirs))
    except Exception:  # noqa: BLE001 - whatever libcst does differently, bodies are not deferred
        return False


class _BlockCounter(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.count += 1


def _count_blocks(module: cst.Module) -> int:
    counter = _BlockCounter()
    walk.visit(module, counter)
    return counter.count


def _same_suite(mine: cst.BaseSuite, real: cst.BaseSuite) -> bool:
    if isinstance(real, cst.IndentedBlock) != isinstance(mine, cst.IndentedBlock):
        return False
    if not isinstance(real, cst.IndentedBlock):
        return mine.deep_equals(real)
    return all(_deep_equal_values(getattr(mine, name), getattr(real, name)) for name in _FIELDS)


def _deep_equal_values(mine: object, real: object) -> bool:
    if isinstance(real, cst.CSTNode):
        return isinstance(mine, cst.CSTNode) and mine.deep_equals(real)
    if isinstance(real, (list, tuple)):
        return isinstance(mine, (list, tuple)) and len(mine) == len(real) and all(_deep_equal_values(a, b) for a, b in zip(mine, real))
    return mine == real


def _new_deferred(bodies: "_DeferredBodies", syntax: _AstFunction, where: tuple[int, int, int], placeholder: cst.IndentedBlock) -> DeferredBlock:
    """``where``: (0-based line of the ``def``, line after the function's last, line of the
    module's next statement)."""
    block = object.__new__(DeferredBlock)  # no validation: the fields are filled when parsed
    # libcst's frozen nodes refuse attribute assignment: slots are written as object's
    object.__setattr__(block, "_bodies", bodies)
    object.__setattr__(block, "_name", syntax.name)
    object.__setattr__(block, "_syntax", syntax)
    object.__setattr__(block, "_where", where)
    object.__setattr__(block, "_position", bodies.count)
    bodies.count += 1
    object.__setattr__(block, "_ready", False)
    object.__setattr__(block, "_placeholder", placeholder)
    return block


class _DeferredBodies:
    """The function bodies of one module still to parse."""

    def __init__(self, text: str, lines: list[str], module: cst.Module) -> None:
        self._text = text
        self.lines = lines
        self._default_indent = module.default_indent
        #: how many functions of the module are deferred (the blocks are not referred to from
        #: here: they refer to this, and a cycle would outlive the module, see ProjectIndex)
        self.count = 0
        #: the deferred functions as a parse of the whole text gives them, once one needed it
        self._whole: Optional[list[cst.FunctionDef]] = None

    def materialize(self, block: "DeferredBlock") -> None:
        function = self._parse_alone(block)
        if function is None:
            function = self._from_whole_text(block)
        _fill(block, function.body if function is not None else block._placeholder)

    def _parse_alone(self, block: "DeferredBlock") -> Optional[cst.FunctionDef]:
        """The function of ``block`` parsed from its own lines, with just enough around them for
        libcst to see them as in the module: the same default indentation, the ``def`` at its
        indentation, and a statement where the module's next one is (the comments and blank
        lines between belong to the body's footer or to that statement, as in the module)."""
        first, end, following = block._where
        lines = self.lines
        default = self._default_indent
        own = _indentation(lines[first])
        prelude = ["if 1:\n", default + "pass\n"]  # the module's default indentation comes first
        open_levels = [""]
        if own == default:
            prelude.append("if 1:\n")
            open_levels.append(default)
        elif own:
            if not own.startswith(default):
                return None
            prelude += ["if 1:\n", default + "if 1:\n"]
            open_levels += [default, own]
        piece = prelude + lines[first:following]
        if following < len(lines):
            next_indentation = _indentation(lines[following])
            if next_indentation not in open_levels:
                return None
            piece.append(next_indentation + "pass\n")
        try:
            module = cst.parse_module("".join(piece))
        except Exception:  # noqa: BLE001 - fall back to the whole text
            return None
        if module.default_indent != default:
            return None
        found = [function for function in outermost_cst_functions(module.body) if _has_own_lines(function)]
        return found[0] if len(found) == 1 and found[0].name.value == block._name else None

    def _from_whole_text(self, block: "DeferredBlock") -> Optional[cst.FunctionDef]:
        """The function of ``block`` in a parse of the whole text (done once, when first
        needed); None where libcst refuses the text or sees other functions than the skeleton."""
        if self._whole is None:
            try:
                module = cst.parse_module(self._text)
                self._whole = [function for function in outermost_cst_functions(module.body) if _has_own_lines(function)]
            except Exception:  # noqa: BLE001 - libcst refuses a body ast accepted
                self._whole = []
        if block._position >= len(self._whole) or len(self._whole) != self.count:
            return None
        function = self._whole[block._position]
        return function if function.name.value == block._name else None


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _fill(block: DeferredBlock, real: cst.BaseSuite) -> None:
    assert isinstance(real, cst.IndentedBlock) and _SLOTS is not None
    for name in _FIELDS:
        _SLOTS[name].__set__(block, getattr(real, name))
    object.__setattr__(block, "_ready", True)


def python_syntax_tree(text: str) -> Optional[ast.Module]:
    """``text`` parsed by Python's ``ast``; None where it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: libcst parses them quietly
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def parse_deferring_bodies(text: str, syntax: ast.Module) -> Optional[cst.Module]:
    """``text`` parsed by libcst with its functions' bodies deferred (see the module docstring),
    ``syntax`` its tree by Python's ``ast``; None where it is not deferred (the caller parses it
    whole), as for every text where the installed libcst does not allow it (``deferring_works``)."""
    if not deferring_works():
        return None
    return _parse_deferring(text, syntax)


def _parse_deferring(text: str, syntax: ast.Module) -> Optional[cst.Module]:
    if "\r" in text or "\x0c" in text:
        return None
    lines = _lines_of(text)
    outermost = list(_outermost_ast_functions(syntax.body))
    deferred = [function for function in outermost if _body_on_own_lines(function, lines)]
    if not deferred:
        return None
    skeleton = list(lines)
    for function in deferred:
        first, indentation = _body_start(function, lines)
        last = (function.end_lineno or first + 1) - 1
        skeleton[first] = indentation + "..." + ("\n" if lines[last].endswith("\n") else "")
        for number in range(first + 1, function.end_lineno or first + 1):
            skeleton[number] = ""
    try:
        module = cst.parse_module("".join(skeleton))
    except Exception:  # noqa: BLE001 - the caller parses the whole text, and meets the error there
        return None
    ours = list(outermost_cst_functions(module.body))
    if len(ours) != len(outermost) or any(a.name.value != b.name for a, b in zip(ours, outermost)):
        return None
    bodies = _DeferredBodies(text, lines, module)
    for function, parsed in zip(ours, outermost):
        if not _body_on_own_lines(parsed, lines):
            continue
        if not isinstance(function.body, cst.IndentedBlock):
            return None
        end = parsed.end_lineno or parsed.lineno
        block = _new_deferred(bodies, parsed, (parsed.lineno - 1, end, _next_code_line(lines, end)), function.body)
        object.__setattr__(function, "body", block)  # a node of the new skeleton, not shared yet
    return module


def _next_code_line(lines: list[str], start: int) -> int:
    """The first line from ``start`` on that is neither blank nor only a comment."""
    for number in range(start, len(lines)):
        stripped = lines[number].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return len(lines)


def _lines_of(text: str) -> list[str]:
    """The lines of ``text`` with their ``\n``, counted as ``ast`` counts them (str.splitlines
    would also split at form feeds, ``\x1c``, ``\u2028`` ...)."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None) or []
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def _body_start(function: _AstFunction, lines: list[str]) -> tuple[int, str]:
    """The 0-based line where the body's first statement starts, and its indentation."""
    first = function.body[0]
    line = _first_line(first) - 1
    text = lines[line]
    indentation = text[: len(text) - len(text.lstrip(" \t"))]
    return line, indentation


def _body_on_own_lines(function: _AstFunction, lines: list[str]) -> bool:
    if not function.body:
        return False
    first = function.body[0]
    start = _first_line(first)
    if start <= function.lineno:
        return False
    text = lines[start - 1]
    if first.col_offset == 0 or text[: first.col_offset].strip(" \t"):
        return False  # the statement does not start its line (`): return x` of a long header)
    return True


def _has_own_lines(function: cst.FunctionDef) -> bool:
    return isinstance(function.body, cst.IndentedBlock)


def _outermost_ast_functions(body: list[ast.stmt]) -> Iterator[_AstFunction]:
    """The functions of a block that are not inside another function, in source order."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
        elif isinstance(statement, ast.ClassDef):
            yield from _outermost_ast_functions(statement.body)
        elif isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from _outermost_ast_functions(statement.body)
            yield from _outermost_ast_functions(statement.orelse)
        elif isinstance(statement, (ast.Try, _AST_TRY_STAR)):
            yield from _outermost_ast_functions(statement.body)
            for handler in statement.handlers:
                yield from _outermost_ast_functions(handler.body)
            yield from _outermost_ast_functions(statement.orelse)
            yield from _outermost_ast_functions(statement.finalbody)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _outermost_ast_functions(statement.body)
        elif isinstance(statement, _AST_MATCH):
            for case in statement.cases:  # type: ignore[attr-defined]
                yield from _outermost_ast_functions(case.body)


def outermost_cst_functions(body: object) -> Iterator[cst.FunctionDef]:
    """libcst's side of ``_outermost_ast_functions``."""
    return cst_functions(body, lambda function: False)


def cst_functions(body: object, enter: Callable[[cst.FunctionDef], bool]) -> Iterator[cst.FunctionDef]:
    """Functions defined in a sequence of statements, in source order: in classes and compound
    statements, and in a function's own body where ``enter(function)`` says so (after it)."""
    for statement in body:  # type: ignore[attr-defined]
        if isinstance(statement, cst.FunctionDef):
            yield statement
            if enter(statement):
                yield from cst_functions(suite_statements(statement.body), enter)
        elif isinstance(statement, cst.ClassDef):
            yield from cst_functions(suite_statements(statement.body), enter)
        elif isinstance(statement, cst.If):
            yield from _if_functions(statement, enter)
        elif isinstance(statement, (cst.For, cst.While)):
            yield from cst_functions(suite_statements(statement.body), enter)
            if statement.orelse is not None:
                yield from cst_functions(suite_statements(statement.orelse.body), enter)
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from cst_functions(suite_statements(statement.body), enter)
            for handler in statement.handlers:
                yield from cst_functions(suite_statements(handler.body), enter)
            if statement.orelse is not None:
                yield from cst_functions(suite_statements(statement.orelse.body), enter)
            if statement.finalbody is not None:
                yield from cst_functions(suite_statements(statement.finalbody.body), enter)
        elif isinstance(statement, cst.With):
            yield from cst_functions(suite_statements(statement.body), enter)
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                yield from cst_functions(suite_statements(case.body), enter)


def _if_functions(statement: cst.If, enter: Callable[[cst.FunctionDef], bool]) -> Iterator[cst.FunctionDef]:
    yield from cst_functions(suite_statements(statement.body), enter)
    orelse = statement.orelse
    if isinstance(orelse, cst.If):
        yield from _if_functions(orelse, enter)
    elif isinstance(orelse, cst.Else):
        yield from cst_functions(suite_statements(orelse.body), enter)


