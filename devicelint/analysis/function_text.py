"""The source text of function bodies, cut from the file's text instead of regenerated.

The analysis and several rules scan a function's body as text (``p.to(``, ``self.device``,
``torch.load``). libcst can give a node's text only by generating it again from the tree,
which costs about a tenth of the parse for every body of a file, and a body is asked for by
the linted file and by every file that imports its module. Python's own ``ast`` parses the
same text in a tenth of libcst's time and knows where each function ends, so the bodies are
cut from the text: the functions of both trees are paired in source order (their names must
agree pair by pair, else nothing is paired and callers regenerate the text as before).

The text of a body is its lines as written: from the line after the ``def`` header (comments
between header and first statement included) to the end of its last statement, with their
indentation in the file. A body written on the header's line (``def f(x): return x``) is not
cut (callers regenerate it; it is short).

An imported module's functions may have their bodies not parsed yet (devicelint.deferred_bodies):
their own spans come from the pairing without parsing them; the functions nested in one are
paired when its body has been parsed and one of them is asked for.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Optional, Union

import libcst as cst

from devicelint.analysis.names import suite_statements
from devicelint.deferred_bodies import cst_functions, unparsed_body

if TYPE_CHECKING:
    from devicelint.project import ParsedModule

_AstFunction = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class FunctionTexts:
    """Texts of the functions of one module (its tree and the text it was parsed from)."""

    def __init__(self, module: cst.Module, text: str, syntax_tree: Optional[ast.Module] = None) -> None:
        self._module = module
        self._text = text
        self._lines: list[str] = []
        #: per function: (first line of its decorators or ``def``, first line of its body, last line)
        self._spans: Optional[dict[cst.FunctionDef, tuple[int, int, int]]] = None
        #: functions whose body was not parsed when they were paired: their ``ast`` twins, for
        #: pairing the functions nested in them once it is
        self._unpaired_inside: dict[cst.FunctionDef, _AstFunction] = {}
        #: Python's own tree of the text (False: it does not parse), parsed once when first asked
        #: (or handed over by whoever parsed it already)
        self._syntax_tree: Union[ast.Module, None, bool] = syntax_tree

    def syntax_tree(self) -> Optional[ast.Module]:
        """The text parsed by Python's ``ast`` (a tenth of libcst's time), shared by whoever
        needs a quick walk of the whole file; None where it does not parse."""
        if self._syntax_tree is None:
            try:
                self._syntax_tree = ast.parse(self._text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._syntax_tree = False
        return self._syntax_tree if isinstance(self._syntax_tree, ast.Module) else None

    def drop_syntax_tree(self) -> None:
        """Let go of Python's tree of the text (it is parsed again if asked); the cuts already
        found stay. Only where no function body is left to pair (nothing was deferred)."""
        if not self._unpaired_inside and isinstance(self._syntax_tree, ast.Module):
            self._syntax_tree = None

    def body(self, function: cst.FunctionDef) -> Optional[str]:
        """The text of ``function``'s body; None when it cannot be cut (callers regenerate it)."""
        span = self._span(function)
        return self._cut(span[1], span[2]) if span is not None else None

    def whole(self, function: cst.FunctionDef) -> Optional[str]:
        """The text of the whole definition, decorators and header included (None: regenerate)."""
        span = self._span(function)
        return self._cut(span[0], span[2]) if span is not None else None

    def _cut(self, first: int, last: int) -> str:
        return "\n".join(self._lines[first - 1 : last]) + "\n"

    def _span(self, function: cst.FunctionDef) -> Optional[tuple[int, int, int]]:
        if self._spans is None:
            self._spans = self._find_spans()
        span = self._spans.get(function)
        if span is None and self._unpaired_inside:
            self._pair_inside_parsed_bodies()
            span = self._spans.get(function)
        return span

    def _pair_inside_parsed_bodies(self) -> None:
        assert self._spans is not None
        for function, parsed in list(self._unpaired_inside.items()):
            if unparsed_body(function) is not None:
                continue
            del self._unpaired_inside[function]
            self._pair(list(_cst_functions(suite_statements(function.body))), list(_ast_functions(parsed.body)), self._spans)

    def _pair(self, ours: list[cst.FunctionDef], theirs: list[_AstFunction], spans: dict[cst.FunctionDef, tuple[int, int, int]]) -> bool:
        """Pair libcst's functions with ``ast``'s in source order (those nested in a function
        whose body is not parsed are left for later); False, pairing none, where they disagree."""
        pairs = []
        position = 0
        for function in ours:
            if position >= len(theirs) or function.name.value != theirs[position].name:
                return False
            parsed = theirs[position]
            pairs.append((function, parsed))
            position += 1
            if _unparsed(function):
                self._unpaired_inside[function] = parsed
                end = parsed.end_lineno or parsed.lineno
                while position < len(theirs) and theirs[position].lineno <= end:
                    position += 1  # nested in it: paired when its body is parsed
        if position != len(theirs):
            return False
        for function, parsed in pairs:
            body_start = _body_start(function, parsed, self._lines)
            if body_start is not None:
                first = min([parsed.lineno, *(decorator.lineno for decorator in parsed.decorator_list)])
                spans[function] = (first, body_start, parsed.end_lineno or body_start)
        return True

    def _find_spans(self) -> dict[cst.FunctionDef, tuple[int, int, int]]:
        text = self._text
        if "\r" in text or "\x0c" in text:
            return {}  # line counting of ast and str.split could differ: regenerate instead
        tree = self.syntax_tree()
        if tree is None:
            return {}
        self._lines = text.split("\n")
        spans: dict[cst.FunctionDef, tuple[int, int, int]] = {}
        if not self._pair(list(_cst_functions(self._module.body)), list(_ast_functions(tree.body)), spans):
            self._unpaired_inside.clear()
            return {}
        return spans


def _body_start(function: cst.FunctionDef, parsed: _AstFunction, lines: list[str]) -> Optional[int]:
    if not isinstance(function.body, cst.IndentedBlock) or not parsed.body:
        return None
    first = parsed.body[0]
    start = getattr(first, "lineno", 0)
    decorators = getattr(first, "decorator_list", None)
    if decorators:
        start = min([start, *(decorator.lineno for decorator in decorators)])
    if start <= parsed.lineno:
        return None
    # comment and blank lines before the first statement belong to the body; the first line
    # above them that is neither ends the header (`def f(x):` or the `):` of a long one)
    while start - 1 > parsed.lineno and _blank_or_comment(lines[start - 2]):
        start -= 1
    return start


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _cst_functions(body: object) -> Iterator[cst.FunctionDef]:
    """Functions defined in a sequence of statements, in source order (nested ones after their
    enclosing function; not inside a body left unparsed)."""
    return cst_functions(body, lambda function: not _unparsed(function))


def _unparsed(function: cst.FunctionDef) -> bool:
    """A function of an imported module whose body is not parsed yet (reading it would parse it)."""
    return unparsed_body(function) is not None




def _ast_functions(body: list[ast.stmt]) -> Iterator[_AstFunction]:
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
            yield from _ast_functions(statement.body)
        elif isinstance(statement, ast.ClassDef):
            yield from _ast_functions(statement.body)
        elif isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from _ast_functions(statement.body)
            yield from _ast_functions(statement.orelse)
        elif isinstance(statement, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            yield from _ast_functions(statement.body)
            for handler in statement.handlers:
                yield from _ast_functions(handler.body)
            yield from _ast_functions(statement.orelse)
            yield from _ast_functions(statement.finalbody)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _ast_functions(statement.body)
        elif isinstance(statement, getattr(ast, "Match", ())):  # Python 3.10 on
            for case in statement.cases:
                yield from _ast_functions(case.body)


def module_texts(parsed: "ParsedModule") -> FunctionTexts:
    """The function texts of a module of the project (devicelint.project), made once per
    parsed module and shared by whoever asks: the files importing it and its own lint."""
    texts = parsed.texts
    if not isinstance(texts, FunctionTexts):
        texts = parsed.texts = FunctionTexts(parsed.tree, parsed.text, parsed.syntax_tree)
    return texts
