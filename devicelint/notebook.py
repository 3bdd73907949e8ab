"""Jupyter notebooks (``.ipynb``, nbformat 4): the code cells are linted as one program, in the
order Jupyter runs them (a model moved in one cell is still moved in the next), and each finding
is mapped back to its cell, the line within the cell and the column.

IPython syntax that is not Python (line magics, shell escapes, help requests, cell magics) is
replaced by a placeholder of the same number of lines, so positions stay right. A cell that
does not parse is reported as DL001 there and left out of the program; the other cells are
still analysed. The notebook's JSON is read with the standard library; ``dumps`` writes changed
cell sources back in the file's own layout (see ``JsonLayout``).
"""

from __future__ import annotations

import ast
import codecs
import dataclasses
import itertools
import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from devicelint.engine import lint_source
from devicelint.findings import Edit, Finding, Fix, Related
from devicelint.prefilter import may_use_pytorch
from devicelint.rules import Rule, rules_by_code
from devicelint.suppressions import skips_file

if TYPE_CHECKING:
    from devicelint.project import ProjectView

NOTEBOOK_SUFFIX = ".ipynb"

#: cell magics whose body is Python run under a wrapper; any other cell magic (%%bash,
#: %%writefile, %%html, ...) makes the whole cell something else than Python
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture"})

#: ``files = !ls``, ``result = %timeit -o f()``: the targets, and the escape after ``=``
_ASSIGNED_ESCAPE = re.compile(r"^(?P<targets>[\w.]+(?:\s*,\s*[\w.]+)*)\s*=\s*[!%]")
#: ``model?``, ``torch.nn.Linear??``, ``torch.*cuda*?``: IPython's help request at the end
_HELP_SUFFIX = re.compile(r"^[\w.*%]+\?{1,2}$")
_ESCAPE_PREFIXES = ("%", "!", "?")
#: ``%time loss = model(x)``: a line magic that times one Python statement
_TIMED_STATEMENT = re.compile(r"^%(?:time|timeit)\s+(?=[^\s-])")
_PLACEHOLDER = "pass  # IPython syntax"


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


class NotebookError(Exception):
    """The file is not a notebook devicelint can read; ``line``/``column`` locate a JSON error."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class CodeCell:
    #: 1-based, counting every cell (markdown and raw ones too), as Jupyter and ruff do
    number: int
    #: the cell's source as written
    source: str
    #: the source with IPython syntax replaced line for line; None when a cell magic makes the
    #: whole cell something else than Python
    python: Optional[str]
    #: 1-based lines of ``python`` that are placeholders: fixes must not touch them
    placeholder_lines: frozenset[int]


def _split_lines(text: str) -> list[str]:
    """Lines as the fixer counts them (``\\n``-separated; a ``\\r`` before it stays on the line)."""
    return text.split("\n")


def ipython_to_python(source: str) -> tuple[Optional[str], frozenset[int]]:
    """``source`` with every line of IPython syntax replaced by a placeholder at its
    indentation (``x = None`` for ``x = !ls``, so the name is still bound); the lines replaced.
    None when the cell starts with a cell magic that does not wrap Python."""
    lines = _split_lines(source)
    replaced: set[int] = set()
    first = next((index for index, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        words = lines[first].strip()[2:].split()
        if not words or words[0] not in PYTHON_CELL_MAGICS:
            return None, frozenset()
        lines[first] = _indentation(lines[first]) + _PLACEHOLDER
        replaced.add(first + 1)
    scanner = _LogicalLines()
    continued_escape: Optional[str] = None  # the indentation of an escape continued with a backslash
    for index, line in enumerate(lines):
        if index + 1 in replaced:
            continue
        if continued_escape is not None:
            lines[index] = continued_escape + _PLACEHOLDER
            replaced.add(index + 1)
            continued_escape = continued_escape if line.rstrip().endswith("\\") else None
            continue
        if scanner.at_statement_start():
            placeholder = _escape_placeholder(line)
            if placeholder is not None:
                lines[index] = placeholder
                replaced.add(index + 1)
                if line.rstrip().endswith("\\"):
                    continued_escape = _indentation(line)
                continue
        scanner.scan(line)
    return "\n".join(lines), frozenset(replaced)


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _escape_placeholder(line: str) -> Optional[str]:
    """The placeholder for ``line`` if it starts a statement with IPython syntax, else None."""
    stripped = line.strip()
    indentation = _indentation(line)
    timed = _TIMED_STATEMENT.match(stripped)
    if timed is not None:
        # keep the timed statement, in its columns: `%time ` becomes `pass; ` (padded)
        statement = "pass;".ljust(timed.end()) + stripped[timed.end():]
        if _compiles(statement):
            return indentation + statement
    if stripped.startswith(_ESCAPE_PREFIXES):
        return indentation + _PLACEHOLDER
    assigned = _ASSIGNED_ESCAPE.match(stripped)
    if assigned is not None:
        return f"{indentation}{assigned.group('targets')} = None"
    if stripped.endswith("?") and _HELP_SUFFIX.match(_without_comment(line).strip()):
        return indentation + _PLACEHOLDER
    return None


def _without_comment(line: str) -> str:
    """``line``, which starts a statement, without its comment (a ``#`` in a string stays)."""
    return line[: _LogicalLines().scan(line)]


def _compiles(statement: str) -> bool:
    try:
        compile(statement, "<magic>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _LogicalLines:
    """Follows brackets, strings and backslash continuations line by line, to tell whether the
    next line starts a statement: IPython syntax is only recognised there (``%`` at the start
    of a line inside brackets is Python's modulo)."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: Optional[str] = None  # the open string's quote
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def scan(self, line: str) -> int:
        """Advance over ``line``; returns where its comment starts (or its length)."""
        text = line.rstrip("\r")
        self.continued = False
        index = 0
        length = len(text)
        while index < length:
            character = text[index]
            if self.string is not None:
                if character == "\\":
                    if index == length - 1:
                        self.continued = True
                    index += 2
                elif text.startswith(self.string, index):
                    index += len(self.string)
                    self.string = None
                else:
                    index += 1
                continue
            if character == "#":
                return index
            if character in "\"'":
                quote = text[index:index + 3] if text[index:index + 3] in ('"""', "'''") else character
                self.string = quote
                index += len(quote)
                continue
            if character == "\\" and index == length - 1:
                self.continued = True
            elif character in "([{":
                self.depth += 1
            elif character in ")]}":
                self.depth = max(0, self.depth - 1)
            index += 1
        if self.string is not None and len(self.string) == 1 and not self.continued:
            self.string = None  # an unterminated one-line string: a syntax error Python reports
        return length


@dataclass(frozen=True)
class JsonLayout:
    """How a notebook's JSON is laid out, so that writing it back changes only what was fixed.

    Jupyter writes ``json.dumps(nb, indent=1, ensure_ascii=False)`` and a final newline; other
    tools use other indents. ``detect`` finds the layout that reproduces the file exactly; key
    order is the file's own, since ``json`` keeps it."""

    indent: Union[int, str, None]
    separators: tuple[str, str]
    ensure_ascii: bool
    newline: str
    final_newline: bool

    def dumps(self, document: Any) -> str:
        text = json.dumps(document, indent=self.indent, separators=self.separators, ensure_ascii=self.ensure_ascii)
        if self.final_newline:
            text += "\n"
        return text.replace("\n", self.newline) if self.newline != "\n" else text

    @classmethod
    def detect(cls, text: str, document: Any) -> "JsonLayout":
        """The layout that writes ``document`` back as ``text``, else the closest guess."""
        newline = "\r\n" if "\r\n" in text else "\n"
        final_newline = text.endswith("\n")
        body = text.replace("\r\n", "\n")
        indent: Union[int, str, None] = None
        if "\n" in body.rstrip("\n"):
            second_line = body.split("\n", 2)[1]
            whitespace = second_line[: len(second_line) - len(second_line.lstrip())]
            indent = len(whitespace) if whitespace == " " * len(whitespace) else whitespace
        separator_choices = [(",", ": ")] if indent is not None else [(", ", ": "), (",", ":")]
        candidates = [
            cls(indent, separators, ensure_ascii, newline, final_newline)
            for ensure_ascii, separators in itertools.product((False, True), separator_choices)
        ]
        for candidate in candidates:
            if candidate.dumps(document) == text:
                return candidate
        # laid out by hand or by another writer: keep the indent, and escape non-ASCII only if
        # the file did
        return candidates[0] if not text.isascii() or "\\u" not in text else candidates[len(separator_choices)]


@dataclass(frozen=True)
class Notebook:
    document: dict[str, Any]
    #: the file's text (its JSON), decoded
    text: str
    encoding: str
    code_cells: tuple[CodeCell, ...]
    is_python: bool

    @classmethod
    def parse(cls, data: bytes) -> "Notebook":
        encoding = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as error:
            raise NotebookError(f"not UTF-8 text: {error}") from None
        try:
            document = json.loads(text)
        except json.JSONDecodeError as error:
            raise NotebookError(f"not valid JSON: {error.msg}", error.lineno, error.colno) from None
        except ValueError as error:  # a number too long to convert, say
            raise NotebookError(f"not valid JSON: {error}") from None
        except RecursionError:
            raise NotebookError("JSON nested too deeply to read") from None
        return cls(document, text, encoding, _code_cells(document), _is_python(document))

    def with_sources(self, sources: Mapping[int, str]) -> "Notebook":
        """This notebook with the code cells numbered in ``sources`` given new sources; every
        other key, output and metadata is the same object, in the same order."""
        cells = list(self.document["cells"])
        for number, source in sources.items():
            cell = cells[number - 1]
            written: Union[str, list[str]] = source.splitlines(keepends=True) if isinstance(cell.get("source"), list) else source
            cells[number - 1] = {**cell, "source": written}
        document = {**self.document, "cells": cells}
        return dataclasses.replace(self, document=document, code_cells=_code_cells(document))

    def dumps(self, layout: JsonLayout) -> str:
        return layout.dumps(self.document)

    def cell(self, number: int) -> CodeCell:
        for cell in self.code_cells:
            if cell.number == number:
                return cell
        raise KeyError(number)


def _code_cells(document: Any) -> tuple[CodeCell, ...]:
    if not isinstance(document, dict):
        raise NotebookError("JSON, but not a Jupyter notebook (the top level is not an object)")
    version = document.get("nbformat")
    if "worksheets" in document or version in (1, 2, 3):
        raise NotebookError(
            f"nbformat {version} notebooks are not supported; convert it to nbformat 4 with "
            "`jupyter nbconvert --to notebook --nbformat 4`"
        )
    if not isinstance(document.get("cells"), list):
        raise NotebookError("JSON, but not a Jupyter notebook (it has no `cells` list)")
    if version != 4:
        raise NotebookError(f"nbformat {version!r} is not supported; devicelint reads nbformat 4 notebooks")
    cells = []
    for number, cell in enumerate(document["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(f"cell {number} is not a notebook cell (an object with a `cell_type`)")
        if cell["cell_type"] != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"cell {number}: `source` is neither a string nor a list of strings")
        python, placeholders = ipython_to_python(source)
        cells.append(CodeCell(number, source, python, placeholders))
    return tuple(cells)


def _is_python(document: dict[str, Any]) -> bool:
    """False when the notebook's kernel says it runs another language (R, Julia, ...)."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return True
    languages = []
    for table, key in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(table)
        if isinstance(section, dict) and isinstance(section.get(key), str):
            languages.append(section[key].strip().lower())
    return all(language.startswith("python") for language in languages)


class Program:
    """The code cells that parse, joined in order into one module, and the way back from a
    line of it to (cell, line in the cell)."""

    def __init__(self, cells: Sequence[CodeCell]) -> None:
        parts = []
        self._starts: list[int] = []  # first program line of each cell
        self._cells: list[CodeCell] = []
        line = 1
        for cell in cells:
            assert cell.python is not None
            text = cell.python if cell.python.endswith("\n") else cell.python + "\n"
            self._starts.append(line)
            self._cells.append(cell)
            parts.append(text)
            line += text.count("\n")
        self.text = "".join(parts)

    def locate(self, line: int) -> tuple[CodeCell, int]:
        """The cell holding program ``line``, and the line's number within the cell."""
        index = max(bisect_right(self._starts, line) - 1, 0)
        return self._cells[index], line - self._starts[index] + 1

    def name_line(self, line: int) -> str:
        cell, cell_line = self.locate(line)
        return f"{cell_line} of cell {cell.number}"

    def place(self, finding: Finding) -> Finding:
        """``finding``, its related notes and its fix, in cell coordinates."""
        cell, line = self.locate(finding.line)
        end_cell, end_line = self.locate(finding.end_line)
        end_column = finding.end_column
        if end_cell is not cell:  # a span never crosses cells: an end past the cell is its end
            end_line, end_column = _end_of(cell)
        related = tuple(
            Related(note.message, located[1], note.column, located[0].number)
            for note in finding.related
            for located in [self.locate(note.line)]
        )
        return dataclasses.replace(
            finding,
            cell=cell.number,
            line=line,
            end_line=end_line,
            end_column=end_column,
            related=related,
            fix=self._place_fix(finding.fix),
        )

    def _place_fix(self, fix: Optional[Fix]) -> Optional[Fix]:
        """The fix in cell coordinates; None for one that would cross cells or touch a line of
        IPython syntax (its placeholder is not what the file holds)."""
        if fix is None:
            return None
        edits = []
        for edit in fix.edits:
            cell, line = self.locate(edit.line)
            end_cell, end_line = self.locate(edit.end_line)
            if end_cell is not cell or any(number in cell.placeholder_lines for number in range(line, end_line + 1)):
                return None
            edits.append(Edit(line, edit.column, end_line, edit.end_column, edit.content, cell.number))
        return Fix(fix.title, tuple(edits), fix.safe)


def _end_of(cell: CodeCell) -> tuple[int, int]:
    """The (line, column) just after the cell's last character."""
    lines = _split_lines(cell.python or "")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return len(lines), len(lines[-1]) + 1


def lint_notebook_data(
    data: bytes, path: str, rules: Sequence[type[Rule]], *, verbose: bool = False, project: Optional["ProjectView"] = None
) -> list[Finding]:
    """The findings of a notebook file's bytes; a file that is not a readable notebook gives one
    DL001 finding saying why."""
    try:
        notebook = Notebook.parse(data)
    except NotebookError as error:
        return [unreadable_notebook(path, error)]
    return lint_notebook(notebook, path, rules, verbose=verbose, project=project)


def unreadable_notebook(path: str, error: NotebookError) -> Finding:
    rule = rules_by_code()["DL001"]
    message = f"notebook cannot be read: {error.message}"
    return Finding(rule.code, rule.name, rule.severity, message, path, error.line, error.column, error.line, error.column)


def lint_notebook(
    notebook: Notebook, path: str, rules: Sequence[type[Rule]], *, verbose: bool = False, project: Optional["ProjectView"] = None
) -> list[Finding]:
    """Every finding of ``rules`` in the notebook's code cells, in cell coordinates. A notebook
    whose kernel is not Python has none (it is skipped without a note)."""
    if not notebook.is_python:
        return []
    python_cells = [cell for cell in notebook.code_cells if cell.python is not None]
    everything = "\n".join(cell.python or "" for cell in python_cells)
    if not may_use_pytorch(everything) or skips_file(everything):
        return []
    findings: list[Finding] = []
    parsed = []
    for cell in python_cells:
        error = _syntax_error(cell, path)
        if error is None:
            parsed.append(cell)
        else:
            findings.append(error)
    if parsed:
        program = Program(parsed)
        for finding in lint_source(program.text, path, rules, verbose=verbose, name_line=program.name_line, project=project):
            findings.append(program.place(finding))
    findings.sort(key=Finding.sort_key)
    return findings


def _syntax_error(cell: CodeCell, path: str) -> Optional[Finding]:
    """DL001 for a cell Python cannot compile on its own (Jupyter runs each cell on its own, with
    ``await`` allowed at the top level), placed in the cell; None when it compiles."""
    assert cell.python is not None
    rule = rules_by_code()["DL001"]
    try:
        compile(cell.python, f"<cell {cell.number}>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError as error:
        line, column = error.lineno or 1, error.offset or 1
        message = f"syntax error: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:  # NUL bytes; nesting too deep
        line, column = 1, 1
        message = f"cannot be parsed: {error}" if isinstance(error, ValueError) else "too deeply nested to parse"
    else:
        return None
    return Finding(rule.code, rule.name, rule.severity, message, path, line, column, line, column, cell=cell.number)
