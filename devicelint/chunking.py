"""Big files in pieces.

libcst's tree costs about 560 bytes of memory per source character (785 MB for torch's 1.4 MB
common_methods_invocations.py), and its parser slows down super-linearly on very large
modules. A file over CHUNK_CHARACTERS is therefore linted in pieces of at most about that size,
each on its own, with the imports of the pieces before it known; findings are moved back to the
file's lines.

``plan_pieces`` cuts between top-level statements, found with the tokenizer (so a column-0 line
inside a string is never taken for one). A single statement bigger than a piece -- torch's
``op_db = [...]`` is 660 KB -- is cut between the elements of its outermost bracket, each piece
re-wrapped in that bracket so that it parses on its own. Where the tokenizer cannot follow the
file, ``cut_points`` offers top-level ``def`` / ``class`` lines instead and the engine keeps the
first cut where the piece parses.
What crosses a cut (a tensor made in one piece and used in another) becomes unknown to the
analysis, which makes it quieter, never noisier.
"""

from __future__ import annotations

import io
import re
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Optional

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


_CLOSER = {"(": ")", "[": "]", "{": "}"}
_NOT_A_STATEMENT = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


@dataclass(frozen=True)
class Piece:
    """Source to lint on its own; its line ``n`` is the file's line ``n + line_shift``."""

    text: str
    line_shift: int


@dataclass
class _Statement:
    start: int
    inner_cuts: list[tuple[int, str]]  # (offset of a line that starts an element, the bracket it is in)


def _statements(text: str, line_starts: list[int]) -> Optional[list[_Statement]]:
    """Top-level statements (a decorated definition counts once) with the places inside their
    outermost bracket where a new element starts on a new line; None if the tokenizer fails."""
    statements = [_Statement(0, [])]
    brackets: list[str] = []
    indent = 0
    at_statement_start = True
    after_decorator = False
    after_comma_newline = False
    previous_was_comma = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, string, (row, column) = token.type, token.string, token.start
            if kind == tokenize.INDENT:
                indent += 1
            elif kind == tokenize.DEDENT:
                indent -= 1
            if kind in _NOT_A_STATEMENT:
                if kind == tokenize.NEWLINE:
                    at_statement_start = True
                if kind == tokenize.NL and previous_was_comma and len(brackets) == 1:
                    after_comma_newline = True
                continue
            offset = line_starts[row - 1]
            if at_statement_start:
                at_statement_start = False
                if indent == 0 and column == 0 and not after_decorator and offset > statements[-1].start:
                    statements.append(_Statement(offset, []))
                if indent == 0:
                    after_decorator = string == "@"
            elif after_comma_newline and string not in (")", "]", "}"):
                statements[-1].inner_cuts.append((offset, brackets[0]))
            after_comma_newline = False
            previous_was_comma = string == "," and kind == tokenize.OP
            if kind == tokenize.OP:
                if string in _CLOSER:
                    brackets.append(string)
                elif string in (")", "]", "}") and brackets:
                    brackets.pop()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return statements


def plan_pieces(text: str, size: Optional[int] = None) -> Optional[list[Piece]]:
    """``text`` cut into pieces of about ``size`` characters that each parse on their own if
    the file does; None where the tokenizer cannot follow the file (the engine then falls back
    to ``cut_points``)."""
    if size is None:
        size = CHUNK_CHARACTERS  # read now, so a test (or caller) that changes it is heard
    if "\r" in text.replace("\r\n", ""):
        return None  # lone CR line endings: the tokenizer's lines would not be libcst's
    line_starts = [0]
    line_starts.extend(match.end() for match in re.finditer("\n", text))
    statements = _statements(text, line_starts)
    if statements is None:
        return None
    starts = [statement.start for statement in statements] + [len(text)]

    def line_of(offset: int) -> int:
        return bisect_right(line_starts, offset) - 1

    pieces: list[Piece] = []
    index = 0
    while index < len(statements):
        start = starts[index]
        end_index = bisect_right(starts, start + size) - 1
        if end_index > index:
            pieces.append(Piece(text[start : starts[end_index]], line_of(start)))
            index = end_index
            continue
        # one statement bigger than a piece
        end = starts[index + 1]
        pieces.extend(_split_statement(text, start, end, statements[index].inner_cuts, size, line_of))
        index += 1
    return pieces


def _split_statement(
    text: str, start: int, end: int, inner_cuts: list[tuple[int, str]], size: int, line_of: Callable[[int], int]
) -> list[Piece]:
    """One statement as pieces re-wrapped in its outermost bracket: ``x = [a,`` + ``]``, then
    ``[`` + ``b,`` + ``]``, ..., then ``[`` + ``z]``; whole where it has no such elements."""
    if not inner_cuts:
        return [Piece(text[start:end], line_of(start))]
    bracket = inner_cuts[0][1]
    if any(opener != bracket for _, opener in inner_cuts):
        return [Piece(text[start:end], line_of(start))]
    closer = _CLOSER[bracket]
    # greedy: end each piece at the last element start that keeps it within ``size``
    cuts = [start]
    for position, (offset, _) in enumerate(inner_cuts):
        following = inner_cuts[position + 1][0] if position + 1 < len(inner_cuts) else end
        if following - cuts[-1] > size and offset > cuts[-1]:
            cuts.append(offset)
    if len(cuts) == 1:
        return [Piece(text[start:end], line_of(start))]
    bounds = cuts + [end]
    pieces = []
    for number, (piece_start, piece_end) in enumerate(zip(bounds, bounds[1:])):
        body = text[piece_start:piece_end]
        if number == 0:
            pieces.append(Piece(body + closer + "\n", line_of(piece_start)))
        elif piece_end == end:
            pieces.append(Piece(bracket + "\n" + body, line_of(piece_start) - 1))
        else:
            pieces.append(Piece(bracket + "\n" + body + closer + "\n", line_of(piece_start) - 1))
    return pieces


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
