"""Big files in pieces.

libcst's tree costs about 560 bytes of memory per source character (785 MB for torch's 1.4 MB
common_methods_invocations.py), and its parser slows down super-linearly on very large
modules. A file over CHUNK_CHARACTERS is therefore cut at top-level ``def`` / ``class`` /
decorator lines into pieces of about that size (a cut is kept only where the piece parses);
each piece is linted on its own, with the imports of the pieces before it known, and its
findings are moved back to the file's lines.
What crosses a cut (a tensor made in one piece and used in another) becomes unknown to the
analysis, which makes it quieter, never noisier.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator

from devicelint.findings import Edit, Finding, Fix, Related

CHUNK_CHARACTERS = 300_000
_BOUNDARY = re.compile(r"^(?:@|def |async def |class )", re.MULTILINE)
_MAX_ATTEMPTS = 40


def cut_points(text: str, start: int) -> Iterator[int]:
    """Offsets of top-level definition lines at or after ``start`` where a piece may end (a
    decorated def counts once, at its first decorator), then the end of the text."""
    attempts = 0
    previous_decorator = False
    for match in _BOUNDARY.finditer(text, start):
        offset = match.start()
        is_decorator = text.startswith("@", offset)
        if not previous_decorator:
            attempts += 1
            if attempts > _MAX_ATTEMPTS:
                break
            yield offset
        previous_decorator = is_decorator
    yield len(text)


def shift(finding: Finding, lines: int) -> Finding:
    """Move a finding (and its fix and related notes) down by ``lines``."""
    fix = finding.fix
    if fix is not None:
        fix = Fix(
            fix.title,
            tuple(Edit(e.line + lines, e.column, e.end_line + lines, e.end_column, e.content) for e in fix.edits),
            fix.safe,
        )
    related = tuple(Related(r.message, r.line + lines, r.column) for r in finding.related)
    return replace(finding, line=finding.line + lines, end_line=finding.end_line + lines, fix=fix, related=related)
