"""Source positions for the few nodes that need them.

libcst's PositionProvider records a range for every node of the module and costs about three
times the parse. A file usually has no finding at all, and otherwise a handful, so positions are
computed once per file, on first demand, and only for the nodes asked for: one code-generation
pass that counts characters and records start/end offsets of the wanted nodes.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

import libcst as cst
from libcst._nodes.internal import CodegenState


@dataclass(frozen=True)
class Span:
    """1-based lines, 1-based columns counted in characters; end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


class _NullContext:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_NULL_CONTEXT = _NullContext()


class _OffsetRecordingState(CodegenState):
    """A code-generation state that tracks the character offset and records wanted nodes."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.wanted = wanted
        self.ranges: dict[int, tuple[int, int]] = {}

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens and self.tokens[-1] == self.default_newline:
            self.offset -= len(self.tokens[-1])
        super().pop_trailing_newline()

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ):  # type: ignore[override]
        if id(node) not in self.wanted:
            return _NULL_CONTEXT
        if start_node is not None:
            self.wanted.add(id(start_node))
        if end_node is not None:
            self.wanted.add(id(end_node))
        return self._record(node, start_node, end_node)

    @contextmanager
    def _record(
        self, node: cst.CSTNode, start_node: Optional[cst.CSTNode], end_node: Optional[cst.CSTNode]
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            end = self.offset
            if start_node is not None and id(start_node) in self.ranges:
                start = self.ranges[id(start_node)][0]
            if end_node is not None and id(end_node) in self.ranges:
                end = self.ranges[id(end_node)][1]
            self.ranges[id(node)] = (start, end)


class PositionIndex:
    """Maps nodes of one module to spans, computing them lazily and in batches."""

    def __init__(self, module: cst.Module, source: str) -> None:
        self._module = module
        self._source = source
        self._line_starts: Optional[list[int]] = None
        self._ranges: dict[int, tuple[int, int]] = {}
        self._keepalive: list[cst.CSTNode] = []
        #: nodes looked for and not found: they belong to another module
        self._absent: set[int] = set()

    def prepare(self, nodes: Iterable[cst.CSTNode]) -> None:
        """Compute spans for all of ``nodes`` in one code-generation pass."""
        wanted = {id(node) for node in nodes if id(node) not in self._ranges and id(node) not in self._absent}
        if not wanted:
            return
        self._keepalive.extend(nodes)
        state = _OffsetRecordingState(self._module, wanted)
        self._module._codegen(state)
        self._ranges.update(state.ranges)
        self._absent.update(wanted.difference(state.ranges))

    def span(self, node: cst.CSTNode) -> Span:
        if id(node) not in self._ranges:
            self.prepare([node])
        start, end = self._ranges.get(id(node), (0, 0))
        line, column = self._line_column(start)
        end_line, end_column = self._line_column(end)
        return Span(line, column, end_line, end_column)

    def line(self, node: cst.CSTNode) -> int:
        return self.span(node).line

    def knows(self, node: cst.CSTNode) -> bool:
        """Is ``node`` part of this module (after ``prepare``)? Nodes of other modules of the
        project reach the rules through the values made there."""
        if id(node) not in self._ranges and id(node) not in self._absent:
            self.prepare([node])
        return id(node) in self._ranges

    def _line_column(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            text = self._source
            index = text.find("\n")
            while index != -1:
                starts.append(index + 1)
                index = text.find("\n", index + 1)
            self._line_starts = starts
        row = bisect.bisect_right(self._line_starts, offset) - 1
        return row + 1, offset - self._line_starts[row] + 1
