"""Lint one file: decode, parse once, run the device-flow analysis once with every selected
rule subscribed to its events, then resolve positions and apply suppressions."""

from __future__ import annotations

import ast
import codecs
import contextlib
import gc
from importlib import metadata
import io
import os
import re
import tokenize
import traceback
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, Optional, Sequence, Union

import libcst as cst

from devicelint.analysis.events import BinaryEvent, CallEvent
from devicelint.analysis.flow import FlowAnalyzer
from devicelint.analysis.values import Kind, Value
from devicelint.chunking import CHUNK_CHARACTERS, cut_points, plan_pieces, shift
from devicelint.findings import Edit, Finding, Fix, Related
from devicelint.positions import PositionIndex
from devicelint.prefilter import may_use_pytorch
from devicelint.rule_api import NodeEdit, RuleContext
from devicelint.rules import Rule, rules_by_code
from devicelint.suppressions import parse_suppressions, skips_file

if TYPE_CHECKING:
    from devicelint.analysis.project_imports import ForeignModule
    from devicelint.project import ProjectView

_LINE_TOKEN = re.compile("\x00L(\\d+)\x00")
#: how a message names a line of the text linted: "12" in a file; "3 of cell 2" in a notebook
LineNamer = Callable[[int], str]
_HOOKS = ("on_call", "on_binary", "on_expression_statement", "on_subscript_assign", "on_condition", "on_assign", "on_index", "on_return", "on_ndarray_store", "on_index_put")


class _Dispatcher:
    """Fans analysis events out to the rules that override each hook; a rule that raises is
    turned into one DL002 finding and unsubscribed, and every other rule goes on."""

    def __init__(self, rules: list[Rule], ctx: RuleContext) -> None:
        self.ctx = ctx
        self.crashes: list[tuple[type[Rule], BaseException]] = []
        self.rules = rules
        self._subscribe()

    def _subscribe(self) -> None:
        """Per hook, the bound hooks of the rules that override it: all of them, and those that
        hear the passes of call sites. Rebuilt (never changed in place) when a rule is dropped,
        so a dispatch under way goes on over the lists it started with."""
        self.subscribers: dict[str, list[tuple[type[Rule], Callable[..., None], Rule]]] = {
            hook: [(type(rule), getattr(rule, hook), rule) for rule in self.rules if getattr(type(rule), hook) is not getattr(Rule, hook)]
            for hook in _HOOKS
        }
        self.call_site_subscribers = {
            hook: [entry for entry in subscribers if entry[0].follows_call_sites] for hook, subscribers in self.subscribers.items()
        }

    def _dispatch(self, hook: str, *args: object) -> None:
        ctx = self.ctx
        # a pass of one call site: only the rules that weigh where values are hear it
        subscribers = self.subscribers[hook] if ctx.analyzer.call_context is None else self.call_site_subscribers[hook]
        for rule_class, method, rule in subscribers:
            ctx._rule = rule_class
            try:
                method(*args)
            except Exception as error:  # noqa: BLE001 - isolating one rule is the point
                self._disable(rule, error)

    def _disable(self, rule: Rule, error: BaseException) -> None:
        if rule not in self.rules:
            return
        self.crashes.append((type(rule), error))
        self.rules = [other for other in self.rules if other is not rule]
        self._subscribe()

    def on_call(self, event: CallEvent) -> None:
        self._dispatch("on_call", event)

    def on_binary(self, event: BinaryEvent) -> None:
        self._dispatch("on_binary", event)

    def on_expression_statement(self, node: cst.Expr, value: Value) -> None:
        self._dispatch("on_expression_statement", node, value)

    def on_subscript_assign(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        self._dispatch("on_subscript_assign", target, value_node, value)

    def on_condition(self, node: cst.BaseExpression, value: Value) -> None:
        self._dispatch("on_condition", node, value)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        self._dispatch("on_assign", statement, target, value_node, value)

    def on_index(self, node: cst.Subscript, base: Value, index_node: cst.BaseExpression, index: Value) -> None:
        self._dispatch("on_index", node, base, index_node, index)

    def on_return(self, node: cst.Return, value: Value) -> None:
        self._dispatch("on_return", node, value)

    def on_ndarray_store(self, target: cst.Subscript, value_node: cst.BaseExpression, value: Value) -> None:
        self._dispatch("on_ndarray_store", target, value_node, value)

    def on_index_put(self, target: cst.Subscript, base: Value, index: Value, value_node: cst.BaseExpression, value: Value) -> None:
        self._dispatch("on_index_put", target, base, index, value_node, value)

    def finish(self) -> None:
        for rule in self.rules:
            self.ctx._rule = type(rule)
            try:
                rule.finish()
            except Exception as error:  # noqa: BLE001
                self._disable(rule, error)


class DecodeError(Exception):
    """The bytes are not Python source. ``line`` and ``column`` (1-based, the column in
    characters) point at the first byte that does not decode, or at the encoding declaration
    that names an unknown encoding."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def detect_encoding(data: bytes) -> str:
    """The encoding Python would use: ``utf-8-sig`` with a BOM, a PEP 263 declaration, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # tokenize reads the first two lines: a byte there that is not UTF-8 (and no
        # declaration), or a declaration it cannot use
        first_two_lines = b"\n".join(data.split(b"\n", 2)[:2])
        try:
            first_two_lines.decode("utf-8")
        except UnicodeDecodeError as bad:
            message = f"{error} (byte 0x{data[bad.start]:02x} is not UTF-8)"
            raise DecodeError(message, *_byte_position(data, bad.start, "utf-8")) from None
        raise DecodeError(str(error), _declaration_line(data)) from None
    return encoding


def _byte_position(data: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """Line and character column of the byte at ``offset``; what precedes it on its line
    decodes (``offset`` is the first byte that does not)."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    before = data[line_start:offset].decode(encoding, errors="replace")
    if line_start == 0 and before.startswith("\ufeff"):
        before = before[1:]  # the BOM is not a column
    return data.count(b"\n", 0, offset) + 1, len(before) + 1


def _declaration_line(data: bytes) -> int:
    for number, line in enumerate(data.splitlines()[:2], start=1):
        if b"coding" in line:
            return number
    return 1


def decode_source(data: bytes) -> str:
    """Decode as Python does; re-encoding with ``detect_encoding(data)`` restores the bytes."""
    encoding = detect_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        # utf-8-sig counts its offsets after the BOM it strips
        offset = error.start + (len(codecs.BOM_UTF8) if encoding == "utf-8-sig" and data.startswith(codecs.BOM_UTF8) else 0)
        line, column = _byte_position(data, offset, encoding)
        raise DecodeError(f"cannot decode as {encoding}: {error}", line, column) from None
    except LookupError as error:
        raise DecodeError(f"cannot decode as {encoding}: {error}", _declaration_line(data)) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def lint_source(
    source: Union[str, bytes],
    path: str,
    rules: Sequence[type[Rule]],
    *,
    verbose: bool = False,
    suppress: bool = True,
    name_line: LineNamer = str,
    project: Optional[ProjectView] = None,
) -> list[Finding]:
    """All findings of ``rules`` in one file, sorted by position; inline suppressions are
    applied unless ``suppress`` is false (flake8 applies its own ``# noqa``). Messages that
    point at another line ("moved there at line 3") name it with ``name_line``. With
    ``project``, the modules of the file's project that it imports are read too (see
    devicelint.project); ``project.reads`` then lists them.

    Every caller lints through here (the CLI with and without ``--jobs``, the fixer, flake8),
    so this is the one place the cyclic garbage collector is paused (see ``cyclic_gc_paused``)."""
    with cyclic_gc_paused():
        return _lint_source(source, path, rules, verbose, suppress, name_line, project)


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Keep Python's cyclic garbage collector off while one file is linted, then restore
    whatever state it was in.

    Parsing and analysing a file allocates a great many objects (libcst nodes, analysis
    values) that live about as long as the file; the collector, triggered by the allocation
    count, would otherwise walk them (and, in its full collections, everything the process
    holds) again and again: 5-12% of the whole run, measured. Reference counting frees the
    file's tree as soon as it is done; the few thousand objects left in cycles are young, and
    the first automatic collection after the collector is back on frees them, so memory stays
    bounded by one file (and, for a big file, by one piece: see ``_collect_piece``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def survivors_frozen_between_files() -> Iterator[Callable[[], None]]:
    """For a batch of files in a process of devicelint's own (the CLI's loop, a worker):
    yields what to call after each file - collect that file's cycles, then freeze what
    outlives it (the project's parsed modules and their analysis, kept for the next files), so
    that the collector's later passes do not walk them again and again (about 10% of a cold
    run with project imports on timm, measured). Everything is unfrozen when the batch ends.
    Frozen objects are still freed by reference counting; a caller that froze objects itself
    is left alone (nothing is frozen)."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield lambda: None
        return

    def after_file() -> None:
        gc.collect(0)
        gc.freeze()

    _survivors_frozen[0] = True
    try:
        yield after_file
    finally:
        _survivors_frozen[0] = False
        gc.unfreeze()


#: whether a batch freezes what outlives each file (``survivors_frozen_between_files``)
_survivors_frozen = [False]


def _freeze_kept_tree() -> None:
    """A linted file's tree just parsed and kept by the project index for the files after it
    that import it: frozen at once, while it is nearly all the young objects there are (only
    what the lint of this file has made so far, before its analysis starts), rather than
    walked once by the collector after the file and then frozen by ``after_file``. A tree has
    no reference cycles (nodes refer to their children only), so freezing it early keeps no
    garbage; it is still freed by reference counting when the index lets it go. Only within
    ``survivors_frozen_between_files``, which unfreezes everything when the batch ends."""
    if _survivors_frozen[0]:
        gc.freeze()


def _collect_piece() -> None:
    """Between two pieces of a big file: free the cycles of the piece just done, which the
    paused collector would otherwise keep until the whole file is done."""
    if not gc.isenabled():
        gc.collect(0)


def _lint_source(
    source: Union[str, bytes],
    path: str,
    rules: Sequence[type[Rule]],
    verbose: bool,
    suppress: bool,
    name_line: LineNamer,
    project: Optional[ProjectView] = None,
) -> list[Finding]:
    registry = rules_by_code()
    syntax_rule = registry["DL001"]
    if isinstance(source, bytes):
        try:
            text = decode_source(source)
        except DecodeError as error:
            return [_file_level(syntax_rule, path, f"file cannot be read as Python source: {error}", error.line, error.column)]
    else:
        text = source
    if not may_use_pytorch(text) or skips_file(text):
        return []
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        return [_file_level(syntax_rule, path, "source contains a NUL byte", line)]
    too_deep = _too_deeply_nested(text)
    if too_deep is not None:
        return [_file_level(syntax_rule, path, too_deep[0], too_deep[1])]
    if len(text) > CHUNK_CHARACTERS:
        return _lint_in_pieces(text, path, rules, verbose, suppress, name_line, project)
    try:
        module = project.tree_for(text) if project is not None else None
        if module is None:
            module = cst.parse_module(text)
            if project is not None and project.keep(text, module):
                _freeze_kept_tree()
    except cst.ParserSyntaxError as error:
        return [_syntax_finding(syntax_rule, path, text, error)]
    except RecursionError:
        return [_file_level(syntax_rule, path, "too deeply nested to parse")]
    except Exception as error:  # noqa: BLE001 - the native parser can fail in odd ways on odd input
        return [_file_level(syntax_rule, path, f"cannot be parsed: {type(error).__name__}: {error}")]
    findings, _ = _lint_module(module, text, path, rules, verbose, suppress, {}, name_line, project=project)
    if project is not None:
        project.linted()
    return findings


def _below(name_line: LineNamer, first_line: int) -> LineNamer:
    """``name_line`` for a piece of the text that starts after its ``first_line`` lines."""
    return lambda line: name_line(line + first_line)


def _lint_in_pieces(
    text: str, path: str, rules: Sequence[type[Rule]], verbose: bool, suppress: bool, name_line: LineNamer, project: Optional[ProjectView]
) -> list[Finding]:
    """A big file, piece by piece (see devicelint.chunking): each piece is parsed once, linted,
    and dropped before the next, so memory follows the piece, not the file."""
    pieces = plan_pieces(text)
    whole = _WholeFile.of(text)
    if pieces is not None:
        findings: list[Finding] = []
        imports: dict[str, Value] = {}
        for piece in pieces:
            try:
                module = cst.parse_module(piece.text)
            except Exception:  # noqa: BLE001 - a piece that does not parse: let the fallback place the error
                break
            piece_findings, state = _lint_module(
                module, piece.text, path, rules, verbose, suppress, imports, _below(name_line, piece.line_shift), whole, project
            )
            findings.extend(shift(finding, piece.line_shift) for finding in piece_findings)
            imports = {name: value for name, value in state.items() if value.kind == Kind.REF}
            # nothing of this piece's tree may outlive it, or two trees share the peak
            del module, state, piece_findings
            _collect_piece()
        else:
            findings.sort(key=Finding.sort_key)
            return findings
    return _lint_at_definitions(text, path, rules, verbose, suppress, name_line, project)


_DEVICE_PROBE_TEXT = re.compile(r"\b(is_available|device_count)\s*\(")
_ACCELERATOR_TEXT = re.compile(r"cuda|device|accelerator|\b(gpus?|mps|xpu|npu|hpu|tpu)\b|\.to\(")


def _mentions_accelerator(text: str) -> bool:
    """Does the program's text name an accelerator or a device anywhere?"""
    return _ACCELERATOR_TEXT.search(text) is not None


class _WholeFile(NamedTuple):
    """What a big file linted in pieces says anywhere, read once from its whole text: another
    piece may be the one that asks which device it has, or names one."""

    probes_devices: bool
    mentions_accelerator: bool

    @classmethod
    def of(cls, text: str) -> "_WholeFile":
        return cls(_DEVICE_PROBE_TEXT.search(text) is not None, _mentions_accelerator(text))


def _lint_at_definitions(
    text: str, path: str, rules: Sequence[type[Rule]], verbose: bool, suppress: bool, name_line: LineNamer, project: Optional[ProjectView]
) -> list[Finding]:
    """The fallback for big files the tokenizer cannot follow: cut at top-level definitions,
    keeping the first cut where the piece parses."""
    syntax_rule = rules_by_code()["DL001"]
    findings: list[Finding] = []
    imports: dict[str, Value] = {}
    whole = _WholeFile.of(text)
    start = 0
    while start < len(text):
        module = None
        end = len(text)
        for end in cut_points(text, start + CHUNK_CHARACTERS) if len(text) - start > CHUNK_CHARACTERS else [len(text)]:
            try:
                module = cst.parse_module(text[start:end])
                break
            except Exception:  # noqa: BLE001 - not a cut point: try the next one
                continue
        first_line = text.count("\n", 0, start)
        if module is None:
            # no cut worked and the rest does not parse: report it where Python places the error
            try:
                cst.parse_module(text[start:])
            except cst.ParserSyntaxError as error:
                finding = _syntax_finding(syntax_rule, path, text[start:], error)
                findings.append(shift(finding, first_line))
            except Exception as error:  # noqa: BLE001
                findings.append(_file_level(syntax_rule, path, f"cannot be parsed: {type(error).__name__}: {error}", first_line + 1))
            break
        piece_findings, state = _lint_module(
            module, text[start:end], path, rules, verbose, suppress, imports, _below(name_line, first_line), whole, project
        )
        findings.extend(shift(finding, first_line) for finding in piece_findings)
        imports = {name: value for name, value in state.items() if value.kind == Kind.REF}
        start = end
        del module, state, piece_findings
        _collect_piece()
    findings.sort(key=Finding.sort_key)
    return findings


def _lint_module(
    module: cst.Module,
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    verbose: bool,
    suppress: bool,
    imports: dict[str, Value],
    name_line: LineNamer,
    whole: Optional[_WholeFile] = None,
    project: Optional[ProjectView] = None,
) -> tuple[list[Finding], dict[str, Value]]:
    registry = rules_by_code()
    ctx = RuleContext(module, path, text)
    instances = [rule(ctx) for rule in rules if rule.code not in ("DL001", "DL002")]
    dispatcher = _Dispatcher(instances, ctx)
    analyzer = FlowAnalyzer(module, dispatcher, lambda node: module.code_for_node(node), text, project, path)
    ctx.analyzer = analyzer
    analyzer.module_state.update(imports)
    if whole is not None:  # a piece of a big file: what the whole file says
        analyzer.facts.chooses_device_at_run_time = whole.probes_devices
        analyzer.facts.mentions_accelerator = whole.mentions_accelerator
    else:
        analyzer.facts.mentions_accelerator = _mentions_accelerator(text)
    findings: list[Finding] = []
    internal_rule = registry["DL002"]
    try:
        analyzer.run()
    except RecursionError:
        findings.append(_file_level(internal_rule, path, "device-flow analysis gave up: code nested too deeply"))
    except Exception as error:  # noqa: BLE001
        findings.append(_internal(internal_rule, path, "device-flow analysis", error, verbose))
    dispatcher.finish()
    for rule_class, error in dispatcher.crashes:
        findings.append(_internal(internal_rule, path, f"rule {rule_class.code} ({rule_class.name})", error, verbose))
    findings.extend(_resolve(ctx, module, text, path, name_line, analyzer.foreign_modules()))
    if suppress:
        findings = parse_suppressions(text).filter(findings)
    findings = _drop_yielding(findings, registry)
    findings.sort(key=Finding.sort_key)
    state = analyzer.module_state
    _release(ctx, dispatcher, analyzer, *instances)
    return findings, state


def _release(*holders: object) -> None:
    """Break the reference cycles of one file's analysis once its findings are out: the
    analyzer, the rules and their context refer to one another and keep bound methods of
    themselves, and through them every node of the tree and every value. Left alone, the
    cyclic garbage collector must walk all of it after each file to free it (measured: 7% of a
    run on timm, nearly 2 million objects for 150 files); emptied, reference counting frees it
    at once and the collector finds almost nothing. Nothing reads these objects afterwards:
    findings are plain data."""
    for holder in holders:
        vars(holder).clear()


def _drop_yielding(findings: list[Finding], registry: dict[str, type[Rule]]) -> list[Finding]:
    """Where two rules report the same span and one ``yields_to`` the other, keep the other's."""
    spans = {(f.code, f.line, f.column, f.end_line, f.end_column) for f in findings}
    kept = []
    for finding in findings:
        rule = registry.get(finding.code)
        yields_to = rule.yields_to if rule is not None else ()
        if any((code, finding.line, finding.column, finding.end_line, finding.end_column) in spans for code in yields_to):
            continue
        kept.append(finding)
    return kept


def _resolve(
    ctx: RuleContext, module: cst.Module, text: str, path: str, name_line: LineNamer, foreign: Sequence["ForeignModule"] = ()
) -> list[Finding]:
    if not ctx._pending:
        return []
    positions = PositionIndex(module, text)
    wanted: list[cst.CSTNode] = list(ctx._line_nodes)
    for pending in ctx._pending:
        wanted.append(pending.node)
        wanted.extend(node for node, _ in pending.related)
        if pending.fix is not None:
            wanted.extend(edit.node for edit in pending.fix.edits)
    positions.prepare(wanted)
    elsewhere = _ElsewhereIndex(foreign, [node for node in wanted if not positions.knows(node)])

    def line_of(node: cst.CSTNode) -> str:
        other = elsewhere.place(node)
        if other is not None:
            return f"{other[1]} of {other[0]}"  # "line 12 of utils.py"
        return name_line(positions.line(node))

    def render(message: str) -> str:
        return _LINE_TOKEN.sub(lambda match: line_of(ctx._line_nodes[int(match.group(1))]), message)

    findings = []
    for pending in ctx._pending:
        if not positions.knows(pending.node):
            continue  # a node of another module: findings there are that file's own
        span = positions.span(pending.node)
        related = []
        for node, message in pending.related:
            if positions.knows(node):
                related.append(Related(render(message), positions.span(node).line, positions.span(node).column))
                continue
            other = elsewhere.place(node)
            if other is not None:
                related.append(Related(render(message), other[1], other[2], path=_shown_path(other[3])))
        fix = None
        if pending.fix is not None and all(positions.knows(edit.node) for edit in pending.fix.edits):
            fix = Fix(pending.fix.title, tuple(_edit(positions, edit) for edit in pending.fix.edits), pending.fix.safe)
        findings.append(
            Finding(
                code=pending.rule.code,
                name=pending.rule.name,
                severity=pending.rule.severity,
                message=render(pending.message),
                path=path,
                line=span.line,
                column=span.column,
                end_line=span.end_line,
                end_column=span.end_column,
                fix=fix,
                related=tuple(related),
            )
        )
    return findings


def _shown_path(path: object) -> str:
    """A path as the command line would show it: relative to the working directory when the
    file is below it."""
    try:
        relative = os.path.relpath(str(path))
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if relative.startswith("..") else relative


class _ElsewhereIndex:
    """Places nodes of the other modules of the project that the analysis read: (how messages
    name the file, line, column, path)."""

    def __init__(self, foreign: Sequence["ForeignModule"], nodes: list[cst.CSTNode]) -> None:
        self._places: dict[int, tuple[str, int, int, object]] = {}
        left = nodes
        for module in foreign:
            if not left:
                break
            index = PositionIndex(module.parsed.tree, module.parsed.text)
            index.prepare(left)
            found = [node for node in left if index.knows(node)]
            for node in found:
                span = index.span(node)
                self._places[id(node)] = (module.display, span.line, span.column, module.parsed.path)
            left = [node for node in left if not index.knows(node)]

    def place(self, node: cst.CSTNode) -> Optional[tuple[str, int, int, object]]:
        return self._places.get(id(node))


def _edit(positions: PositionIndex, edit: NodeEdit) -> Edit:
    span = positions.span(edit.node)
    if edit.mode == "before":
        return Edit(span.line, span.column, span.line, span.column, edit.text)
    if edit.mode == "after":
        return Edit(span.end_line, span.end_column, span.end_line, span.end_column, edit.text)
    return Edit(span.line, span.column, span.end_line, span.end_column, edit.text)


def _file_level(rule: type[Rule], path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(rule.code, rule.name, rule.severity, message, path, line, column, line, column)


#: Python itself refuses more than 200 nested brackets; libcst's native parser crashes the
#: process (stack overflow) at about 1,000 and slows down badly well before
MAX_BRACKET_DEPTH = 200
#: longer lines, or deeper brackets, get an exact check by Python's own parser first
_SUSPICIOUS_LINE = 2_000
MAX_EXPRESSION_DEPTH = 400
_BRACKET = re.compile(r"[()\[\]{}]")


def _max_bracket_depth(text: str) -> int:
    depth = best = 0
    for match in _BRACKET.finditer(text):
        if match.group() in "([{":
            depth += 1
            if depth > best:
                best = depth
        else:
            depth -= 1
    return best


def _too_deeply_nested(text: str) -> Optional[tuple[str, int]]:
    """Input that would crash or stall libcst: a message and a line, else None.

    Cheap signals first (bracket depth, line length); only suspicious files pay for Python's
    own parser, which measures expression depth exactly and without crashing.
    """
    longest = max(map(len, text.splitlines()), default=0)
    if longest <= _SUSPICIOUS_LINE and _max_bracket_depth(text) <= MAX_BRACKET_DEPTH // 2:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        return f"syntax error: {error.msg}", error.lineno or 1
    except (RecursionError, MemoryError):
        return "too deeply nested to parse", 1
    deepest, line = _ast_depth(tree)
    if deepest > MAX_EXPRESSION_DEPTH:
        return (
            f"an expression nested {deepest} levels deep: too deep for devicelint to analyse "
            f"(limit {MAX_EXPRESSION_DEPTH}); the rest of this file is not checked",
            line,
        )
    return None


def _ast_depth(tree: ast.AST) -> tuple[int, int]:
    deepest, line = 0, 1
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest, line = depth, getattr(node, "lineno", line)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest, line


def _syntax_finding(rule: type[Rule], path: str, text: str, error: cst.ParserSyntaxError) -> Finding:
    """Python's own parser places syntax errors better than libcst's; ask it (only on failure)."""
    try:
        ast.parse(text)
    except SyntaxError as python_error:
        line = python_error.lineno or 1
        column = python_error.offset or 1
        return _file_level(rule, path, f"syntax error: {python_error.msg}", line, column)
    except (RecursionError, MemoryError, ValueError):
        pass
    else:
        first_line = str(error.message).splitlines()[0] if error.message else "invalid syntax"
        return _file_level(
            rule, path, f"valid Python that libcst {metadata.version('libcst')} cannot parse yet: {first_line}",
            max(error.raw_line, 1), error.raw_column + 1,
        )
    first_line = str(error.message).splitlines()[0] if error.message else "invalid syntax"
    return _file_level(rule, path, f"syntax error: {first_line}", max(error.raw_line, 1), error.raw_column + 1)


def _internal(rule: type[Rule], path: str, what: str, error: BaseException, verbose: bool) -> Finding:
    message = f"{what} crashed on this file: {type(error).__name__}: {error}"
    if verbose:
        message += "\n" + "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return _file_level(rule, path, message)

