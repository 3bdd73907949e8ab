"""Adding an argument to a call the way a person would type it into that call's layout."""

from __future__ import annotations

from typing import Optional, Union

import libcst as cst

_Whitespace = Union[cst.SimpleWhitespace, cst.ParenthesizedWhitespace]
_NO_SPACE = cst.SimpleWhitespace("")


def with_keyword_argument(call: cst.Call, keyword: str, value: str) -> cst.Call:
    """``call`` with ``keyword=value`` added after its last argument (``call`` has one).

    - arguments one per line, the closing parenthesis on a line of its own: the new argument
      gets a line of its own at the same indentation, and a trailing comma if the call had one;
    - everything else: `, keyword=value` right after the last argument. A single-line call
      drops a stray trailing comma (``f(x, y=1,)`` becomes ``f(x, y=1, keyword=value)``); a
      call closed on a line of its own keeps it (``f(x, y,\\n)``), and a comment after the
      last argument stays at the end of its line.

    The ``=`` is spaced as the call's other keyword arguments are (none: no spaces)."""
    original = last = call.args[-1]
    comma = last.comma if isinstance(last.comma, cst.Comma) else None
    closing = _closing_whitespace(last, comma)
    leading = _leading_whitespace(call)
    added = cst.Arg(keyword=cst.Name(keyword), equal=_equal_like(call), value=cst.parse_expression(value))
    if isinstance(closing, cst.ParenthesizedWhitespace) and isinstance(leading, cst.ParenthesizedWhitespace):
        # one argument per line: the new one on the next line, at the last one's indentation,
        # and the comment that ended the last one's line stays there
        last = last.with_changes(
            comma=cst.Comma(
                whitespace_before=comma.whitespace_before if comma is not None else _NO_SPACE,
                whitespace_after=closing.with_changes(empty_lines=(), indent=leading.indent, last_line=leading.last_line),
            ),
            whitespace_after_arg=_NO_SPACE,
        )
        closing = closing.with_changes(first_line=cst.TrailingWhitespace())
        if comma is not None:
            added = added.with_changes(comma=cst.Comma(whitespace_after=closing))
        else:
            added = added.with_changes(whitespace_after_arg=closing)
    else:
        last = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")), whitespace_after_arg=_NO_SPACE)
        if comma is not None and isinstance(closing, cst.ParenthesizedWhitespace):
            # closed on a line of its own: the trailing comma is the layout's, keep it
            added = added.with_changes(comma=comma, whitespace_after_arg=original.whitespace_after_arg)
        elif comma is None:
            added = added.with_changes(whitespace_after_arg=closing)
    return call.with_changes(args=(*call.args[:-1], last, added))


def _closing_whitespace(last: cst.Arg, comma: Optional[cst.Comma]) -> _Whitespace:
    """What separates the last argument (and its comma) from the closing parenthesis."""
    if comma is not None and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return comma.whitespace_after
    if isinstance(last.whitespace_after_arg, cst.ParenthesizedWhitespace):
        return last.whitespace_after_arg
    return last.whitespace_after_arg if comma is None else _NO_SPACE


def _leading_whitespace(call: cst.Call) -> cst.BaseParenthesizableWhitespace:
    """What precedes the last argument: after the opening parenthesis, or after the comma
    of the argument before it."""
    if len(call.args) == 1:
        return call.whitespace_before_args
    previous = call.args[-2]
    if isinstance(previous.comma, cst.Comma) and isinstance(previous.comma.whitespace_after, cst.ParenthesizedWhitespace):
        return previous.comma.whitespace_after
    return previous.whitespace_after_arg


def _equal_like(call: cst.Call) -> cst.AssignEqual:
    for arg in call.args:
        if isinstance(arg.equal, cst.AssignEqual):
            return cst.AssignEqual(whitespace_before=arg.equal.whitespace_before, whitespace_after=arg.equal.whitespace_after)
    return cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE)
