"""Apply the text edits of fixes to a source string."""

from __future__ import annotations

from typing import Iterable

from devicelint.findings import Edit, Finding


def _offsets(text: str) -> list[int]:
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def apply_fixes(text: str, findings: Iterable[Finding], *, unsafe: bool = False) -> tuple[str, int]:
    """Apply every non-overlapping fix once; returns the new text and how many fixes applied.

    Fixes that overlap one already taken are left for a later pass (the caller re-lints).
    """
    starts = _offsets(text)

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
    if start == end == other_start == other_end:
        return True
    return start < other_end and other_start < end or start == other_start


__all__ = ["Edit", "apply_fixes"]
