"""Apply fixes: text edits on the decoded source, pass after pass until nothing changes, and
an atomic write that keeps the file's encoding, BOM, line endings and mode. A notebook's fixes
are applied to its cells' sources and the notebook's JSON is written back in its own layout."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import libcst as cst

from devicelint.engine import DecodeError, decode_source, detect_encoding, lint_source
from devicelint.findings import Finding
from devicelint.notebook import JsonLayout, Notebook, NotebookError, ipython_to_python, is_notebook, lint_notebook
from devicelint.project import ProjectIndex
from devicelint.rules import Rule

MAX_PASSES = 10


def _line_starts(text: str) -> list[int]:
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def apply_fixes(text: str, findings: Iterable[Finding], *, unsafe: bool = False) -> tuple[str, int]:
    """Apply every applicable fix that overlaps no fix taken before it; returns the new text
    and how many fixes were applied. Overlapping fixes wait for the next pass."""
    starts = _line_starts(text)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    chosen: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    applied = 0
    for finding in sorted(findings, key=Finding.sort_key):
        fix = finding.fix
        if fix is None or (not fix.safe and not unsafe):
            continue
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e.content) for e in fix.edits]
        if any(_overlaps(start, end, other) for start, end, _ in spans for other in taken):
            continue
        chosen.extend(spans)
        taken.extend((start, end) for start, end, _ in spans)
        applied += 1
    for start, end, content in sorted(chosen, key=lambda span: (span[0], span[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _overlaps(start: int, end: int, other: tuple[int, int]) -> bool:
    other_start, other_end = other
    if start == other_start:
        return True
    return start < other_end and other_start < end


@dataclass
class FixResult:
    original: str
    fixed: str
    applied: int
    #: findings left in the fixed text
    remaining: list[Finding]
    encoding: str
    #: for a notebook: (cell number, source before, source after) of each cell the fixes changed
    changed_cells: tuple[tuple[int, str, str], ...] = ()

    def unified_diff(self, path: str) -> str:
        """The change as a unified diff: of the file, or for a notebook one per changed cell
        (``a/train.ipynb:cell 3``), since a diff of the notebook's JSON is unreadable."""
        if not self.changed_cells:
            return _unified_diff(self.original, self.fixed, f"a/{path}", f"b/{path}")
        return "".join(
            _unified_diff(before, after, f"a/{path}:cell {number}", f"b/{path}:cell {number}")
            for number, before, after in self.changed_cells
        )


def _unified_diff(before: str, after: str, from_name: str, to_name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), from_name, to_name)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def fix_source(
    text: str, path: str, rules: Sequence[type[Rule]], *, unsafe: bool = False, project: Optional[ProjectIndex] = None
) -> tuple[str, int, list[Finding]]:
    """Fix ``text`` over successive passes until stable; a pass whose result would not parse
    is dropped (that fix is a devicelint bug, and the file must never be corrupted). With
    ``project`` each pass reads the project modules the file imports, as the lint run did."""
    applied_total = 0
    findings = lint_source(text, path, rules, project=project.view(path) if project is not None else None)
    for _ in range(MAX_PASSES):
        fixed, applied = apply_fixes(text, findings, unsafe=unsafe)
        if applied == 0 or fixed == text:
            break
        try:
            cst.parse_module(fixed)
        except Exception:  # noqa: BLE001 - never write what does not parse
            break
        text = fixed
        applied_total += applied
        findings = lint_source(text, path, rules, project=project.view(path) if project is not None else None)
    return text, applied_total, findings


def fix_file(path: Path, rules: Sequence[type[Rule]], *, unsafe: bool = False, project: Optional[ProjectIndex] = None) -> FixResult | None:
    """None when the file cannot be read or decoded (the lint run reports that)."""
    if is_notebook(str(path)):
        return fix_notebook_file(path, rules, unsafe=unsafe)
    try:
        data = path.read_bytes()
        encoding = detect_encoding(data)
        original = decode_source(data)
    except (OSError, DecodeError):
        return None
    fixed, applied, remaining = fix_source(original, str(path), rules, unsafe=unsafe, project=project)
    return FixResult(original, fixed, applied, remaining, encoding)


def fix_notebook_file(path: Path, rules: Sequence[type[Rule]], *, unsafe: bool = False) -> Optional[FixResult]:
    """Fix a notebook's code cells, pass after pass like ``fix_source``; the fixed text is the
    notebook's JSON with only those cells' sources changed. None when it cannot be read or is
    not a Python notebook (the lint run reports the first)."""
    try:
        notebook = Notebook.parse(path.read_bytes())
    except (OSError, NotebookError):
        return None
    if not notebook.is_python:
        return None
    display = str(path)
    original = notebook
    original_sources = {cell.number: cell.source for cell in notebook.code_cells}
    applied_total = 0
    findings = lint_notebook(notebook, display, rules)
    for _ in range(MAX_PASSES):
        sources, applied = _fix_cells(notebook, findings, unsafe)
        if applied == 0 or not sources:
            break
        notebook = notebook.with_sources(sources)
        applied_total += applied
        findings = lint_notebook(notebook, display, rules)
    changed = tuple(
        (cell.number, original_sources[cell.number], cell.source)
        for cell in notebook.code_cells
        if cell.source != original_sources[cell.number]
    )
    fixed = notebook.dumps(JsonLayout.detect(original.text, original.document)) if changed else original.text
    return FixResult(original.text, fixed, applied_total, findings, notebook.encoding, changed)


def _fix_cells(notebook: Notebook, findings: list[Finding], unsafe: bool) -> tuple[dict[int, str], int]:
    """One pass over a notebook's findings: the new sources of the cells it changes, and how
    many fixes it applied. A cell whose result would not parse keeps its source."""
    by_cell: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.fix is None or not finding.fix.edits:
            continue
        cells = {edit.cell for edit in finding.fix.edits}
        if len(cells) == 1 and None not in cells:
            by_cell.setdefault(cells.pop(), []).append(finding)  # type: ignore[arg-type]
    sources: dict[int, str] = {}
    applied_total = 0
    for number, cell_findings in by_cell.items():
        source = notebook.cell(number).source
        fixed, applied = apply_fixes(source, cell_findings, unsafe=unsafe)
        if applied == 0 or fixed == source:
            continue
        python, _ = ipython_to_python(fixed)
        try:
            cst.parse_module(python if python is not None else "")
        except Exception:  # noqa: BLE001 - never write what does not parse
            continue
        sources[number] = fixed
        applied_total += applied
    return sources, applied_total


def write_atomically(path: Path, text: str, encoding: str) -> None:
    """Write through a temporary file in the same directory and an atomic rename, so an
    interrupted run leaves either the old file or the new one, never a truncated one."""
    data = text.encode(encoding)  # utf-8-sig puts the BOM back
    mode = stat.S_IMODE(os.stat(path).st_mode)
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".devicelint-tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
