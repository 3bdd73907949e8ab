"""Apply fixes: text edits on the decoded source, pass after pass until nothing changes, and
an atomic write that keeps the file's encoding, BOM, line endings and mode."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import libcst as cst

from devicelint.engine import DecodeError, decode_source, detect_encoding, lint_source
from devicelint.findings import Finding
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


def fix_source(text: str, path: str, rules: Sequence[type[Rule]], *, unsafe: bool = False) -> tuple[str, int, list[Finding]]:
    """Fix ``text`` over successive passes until stable; a pass whose result would not parse
    is dropped (that fix is a devicelint bug, and the file must never be corrupted)."""
    applied_total = 0
    findings = lint_source(text, path, rules)
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
        findings = lint_source(text, path, rules)
    return text, applied_total, findings


def fix_file(path: Path, rules: Sequence[type[Rule]], *, unsafe: bool = False) -> FixResult | None:
    """None when the file cannot be read or decoded (the lint run reports that)."""
    try:
        data = path.read_bytes()
        encoding = detect_encoding(data)
        original = decode_source(data)
    except (OSError, DecodeError):
        return None
    fixed, applied, remaining = fix_source(original, str(path), rules, unsafe=unsafe)
    return FixResult(original, fixed, applied, remaining, encoding)


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
