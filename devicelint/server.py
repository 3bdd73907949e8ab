"""``devicelint server``: a language server (LSP) over stdin/stdout, built on pygls.

It lints the text the editor holds (on open, on change after a short pause, on save; cleared on
close) with the ``[tool.devicelint]`` settings found from the document's own location, and
offers code actions: one finding's fix, a suppression comment on its line, and every safe fix
at once (``source.fixAll.devicelint``, what ``devicelint --fix`` does to the file).

Linting runs in one worker thread, so the connection stays responsive while a big file is
analysed; a result is published only if the document still holds the text that was linted.
"""

from __future__ import annotations

import ast
import asyncio
import bisect
import enum
import io
import re
import tokenize
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from devicelint import __version__
from devicelint.config import ConfigError, ConfigResolver, Overrides
from devicelint.engine import lint_source
from devicelint.project import ProjectIndex
from devicelint.findings import Finding, Fix, Severity
from devicelint.rules import Rule
from devicelint.selection import SelectionError
from devicelint.suppressions import parse_suppressions

SOURCE = "devicelint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.devicelint"
FIX_ALL_TITLE = "Fix all safe devicelint problems"
#: a pause in typing this long lints the document; open and save lint at once
DEBOUNCE_SECONDS = 0.25
PYTHON_SUFFIXES = (".py", ".pyi")

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
#: LSP breaks lines at these only (not at form feeds or U+2028, as str.splitlines does)
_LSP_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_IGNORE_COMMENT = re.compile(r"#\s*devicelint:\s*ignore\[(?P<codes>[^\]]*)\]")

_Result = TypeVar("_Result")


def _plain(value: str) -> str:
    """The text of an lsprotocol enum member (``str()`` of one gives ``CodeActionKind.QuickFix``)."""
    return value.value if isinstance(value, enum.Enum) else value


def _count_utf16(text: str) -> int:
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def _count_utf8(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


_UNIT_COUNTERS: dict[str, Callable[[str], int]] = {
    types.PositionEncodingKind.Utf16.value: _count_utf16,
    types.PositionEncodingKind.Utf8.value: _count_utf8,
    types.PositionEncodingKind.Utf32.value: len,
}


class TextPositions:
    """Positions in one text, both ways: devicelint's (1-based lines split at ``\\n``, 1-based
    columns in code points) and LSP's (0-based lines split at ``\\r\\n``, ``\\r`` or ``\\n``,
    0-based characters in the negotiated encoding, UTF-16 code units unless the client asked
    for another), through the offset into the text."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16.value) -> None:
        self.text = text
        self._count = _UNIT_COUNTERS.get(_plain(encoding), _count_utf16)
        self._devicelint_starts = [0, *(match.end() for match in re.finditer("\n", text))]
        self._lsp_starts = [0, *(match.end() for match in _LSP_LINE_BREAK.finditer(text))]

    def offset(self, line: int, column: int) -> int:
        """The offset of a devicelint (line, column), clamped to the text."""
        if line > len(self._devicelint_starts):
            return len(self.text)
        return max(0, min(self._devicelint_starts[max(line, 1) - 1] + column - 1, len(self.text)))

    def position(self, offset: int) -> types.Position:
        row = bisect.bisect_right(self._lsp_starts, offset) - 1
        # an offset inside a line break is the end of that line
        before = self.text[self._lsp_starts[row]:offset].rstrip("\r\n")
        return types.Position(line=row, character=self._count(before))

    def range(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.position(self.offset(line, column)), end=self.position(self.offset(end_line, end_column)))

    def offset_at(self, position: types.Position) -> int:
        """The offset of an LSP position; past the end of its line means the end of the line."""
        if position.line >= len(self._lsp_starts):
            return len(self.text)
        start = self._lsp_starts[position.line]
        end = self._lsp_starts[position.line + 1] if position.line + 1 < len(self._lsp_starts) else len(self.text)
        line = self.text[start:end].rstrip("\r\n")
        units = 0
        for index, character in enumerate(line):
            if units >= position.character:
                return start + index
            units += self._count(character)
        return start + len(line)


@dataclass(frozen=True)
class DocumentLint:
    """One lint of one text: what the diagnostics and code actions of that text come from."""

    text: str
    #: the path findings are reported under, and fixes are computed for
    path: str
    findings: tuple[Finding, ...] = ()
    #: the rules ``--fix`` would run on this file (the selection less its per-file ignores)
    fix_rules: tuple[type[Rule], ...] = ()
    #: why the document could not be linted (bad configuration, a crash), shown as one diagnostic
    problem: Optional[str] = None


def lint_document(text: str, path: Optional[str], uri: str, base: Path) -> DocumentLint:
    """Lint ``text`` as ``devicelint PATH`` run in ``base`` (the workspace folder) would lint the
    file at ``path``: with the nearest ``[tool.devicelint]`` at or above it (else the one found
    from ``base``), its per-file-ignores and, if it sets ``force-exclude``, its exclusions.
    A document that is not a file (``path`` None) takes the settings found from ``base``."""
    shown = path if path is not None else uri
    try:
        resolver = ConfigResolver(Overrides(base=base))
        settings = resolver.for_path(path) if path is not None else resolver.for_directory(str(base))
    except (ConfigError, SelectionError) as error:
        return DocumentLint(text, shown, problem=f"devicelint: error: {error}")
    if path is not None and settings.force_exclude and settings.excludes_named(path):
        return DocumentLint(text, shown)
    findings = tuple(finding for finding in lint_source(text, shown, settings.rules, project=ProjectIndex().view(str(path)) if path is not None else None) if settings.keeps(finding.code, shown))
    return DocumentLint(text, shown, findings, tuple(settings.rules_for(shown)))


def fix_all(lint: DocumentLint) -> str:
    """The text after every safe fix, as ``devicelint --fix`` would write it."""
    from devicelint.fixer import fix_source

    fixed, _, _ = fix_source(lint.text, lint.path, lint.fix_rules)
    return fixed


def diagnostic(finding: Finding, positions: TextPositions, uri: str) -> types.Diagnostic:
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=positions.range(note.line, note.column, note.line, note.column)),
            message=note.message,
        )
        for note in finding.related
    ]
    return types.Diagnostic(
        range=positions.range(finding.line, finding.column, finding.end_line, finding.end_column),
        message=finding.message,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        source=SOURCE,
        related_information=related or None,
    )


def diagnostics(lint: DocumentLint, positions: TextPositions, uri: str) -> list[types.Diagnostic]:
    if lint.problem is not None:
        start = types.Position(line=0, character=0)
        where = types.Range(start=start, end=start)
        return [types.Diagnostic(range=where, message=lint.problem, severity=types.DiagnosticSeverity.Error, source=SOURCE)]
    return [diagnostic(finding, positions, uri) for finding in lint.findings]


def _requested(kind: str, only: Optional[Sequence[str]]) -> bool:
    """Is ``kind`` among the kinds the client asked for? ``only`` names kinds or their parents."""
    return only is None or any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in map(_plain, only))


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


def _text_edit(positions: TextPositions, start: int, end: int, new_text: str) -> types.TextEdit:
    return types.TextEdit(range=types.Range(start=positions.position(start), end=positions.position(end)), new_text=new_text)


def _fix_edits(fix: Fix, positions: TextPositions) -> list[types.TextEdit]:
    return [
        _text_edit(positions, positions.offset(edit.line, edit.column), positions.offset(edit.end_line, edit.end_column), edit.content)
        for edit in fix.edits
    ]


def suppression_edit(text: str, finding: Finding, positions: TextPositions) -> Optional[tuple[int, int, str]]:
    """Where and what to write so that ``# devicelint: ignore[CODE]`` silences ``finding``:
    added to the list of a ``devicelint: ignore`` comment already on its line, or a new comment
    at the end of the line. None where no comment can go (the line ends inside a string or with
    a backslash continuation, or the file does not parse): checked on the edited text, which
    must parse and have the comment as a comment token on that line."""
    if not _parses(text):
        return None
    for line in dict.fromkeys((finding.line, finding.end_line)):
        start = positions.offset(line, 1)
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        if end > start and text[end - 1] == "\r":
            end -= 1
        content = text[start:end]
        existing = _IGNORE_COMMENT.search(content)
        if existing is not None:
            at = start + existing.end("codes")
            edit = (at, at, f", {finding.code}" if existing.group("codes").strip() else finding.code)
        else:
            kept = start + len(content.rstrip())
            edit = (kept, end, f"  # devicelint: ignore[{finding.code}]")
        edited = text[: edit[0]] + edit[2] + text[edit[1]:]
        if _comment_on_line(edited, line, finding.code) and _parses(edited) and parse_suppressions(edited).silences(finding):
            return edit
    return None


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _comment_on_line(text: str, line: int, code: str) -> bool:
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and token.start[0] == line and code in token.string:
                return True
    except (tokenize.TokenError, SyntaxError):
        return False
    return False


def _changed_span(text: str, fixed: str) -> tuple[int, int, str]:
    """One edit that turns ``text`` into ``fixed``: the part between their common prefix and suffix."""
    prefix = 0
    shortest = min(len(text), len(fixed))
    while prefix < shortest and text[prefix] == fixed[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and text[len(text) - 1 - suffix] == fixed[len(fixed) - 1 - suffix]:
        suffix += 1
    return prefix, len(text) - suffix, fixed[prefix:len(fixed) - suffix]


def code_actions(
    lint: DocumentLint,
    uri: str,
    encoding: str,
    requested: types.Range,
    only: Optional[Sequence[str]],
    fixed_text: Optional[str] = None,
) -> list[types.CodeAction]:
    """The actions for the findings that touch ``requested``, and the fix-all action when
    ``fixed_text`` (the text after every safe fix) differs from the text."""
    positions = TextPositions(lint.text, encoding)
    actions: list[types.CodeAction] = []
    quick_fixes = _requested(types.CodeActionKind.QuickFix.value, only)
    for finding in lint.findings if quick_fixes else ():
        found = diagnostic(finding, positions, uri)
        if not _overlaps(found.range, requested):
            continue
        if finding.fix is not None:
            actions.append(
                types.CodeAction(
                    title=f"{finding.code}: {finding.fix.title}" + ("" if finding.fix.safe else " (unsafe)"),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[found],
                    is_preferred=finding.fix.safe,
                    edit=types.WorkspaceEdit(changes={uri: _fix_edits(finding.fix, positions)}),
                )
            )
        suppression = suppression_edit(lint.text, finding, positions)
        if suppression is not None:
            actions.append(
                types.CodeAction(
                    title=f"Suppress {finding.code} on this line",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[found],
                    is_preferred=False,
                    edit=types.WorkspaceEdit(changes={uri: [_text_edit(positions, *suppression)]}),
                )
            )
    if fixed_text is not None and fixed_text != lint.text and _requested(FIX_ALL_KIND, only):
        actions.append(
            types.CodeAction(
                title=FIX_ALL_TITLE,
                kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(changes={uri: [_text_edit(positions, *_changed_span(lint.text, fixed_text))]}),
            )
        )
    return actions


def _is_python(document) -> bool:  # type: ignore[no-untyped-def]
    return document.language_id == "python" or document.uri.endswith(PYTHON_SUFFIXES)


class DevicelintLanguageServer(LanguageServer):
    """The server: open documents' latest lints, the pending debounced lints, and the one
    worker thread that lints."""

    def __init__(self, debounce_seconds: float = DEBOUNCE_SECONDS) -> None:
        # Full sync: pygls applies incremental edits by str.splitlines lines, which also break at
        # form feeds and U+2028, where the client's (LSP) lines do not: edits would land misplaced
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.debounce_seconds = debounce_seconds
        self.linted: dict[str, DocumentLint] = {}
        self._scheduled: dict[str, asyncio.Task[None]] = {}
        self._fixed_texts: dict[str, tuple[str, str]] = {}
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="devicelint-lint")

    @property
    def encoding(self) -> str:
        return _plain(self.workspace.position_encoding or types.PositionEncodingKind.Utf16.value)

    def _base(self) -> Path:
        """Where the CLI would run: the workspace folder, else the server's directory."""
        return Path(self.workspace.root_path or Path.cwd())

    def _log(self, kind: types.MessageType, message: str) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    async def _in_worker(self, function: Callable[..., _Result], *args: object) -> _Result:
        return await asyncio.get_running_loop().run_in_executor(self._worker, function, *args)

    async def lint(self, uri: str, text: str) -> DocumentLint:
        """Lint ``text`` in the worker; a crash becomes the document's problem and a log message."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        try:
            return await self._in_worker(lint_document, text, path, uri, self._base())
        except Exception as error:  # noqa: BLE001 - one bad document must not stop the server
            self._log(types.MessageType.Error, f"devicelint crashed on {uri}:\n{traceback.format_exc()}")
            return DocumentLint(text, path or uri, problem=f"devicelint crashed on this document: {type(error).__name__}: {error}")

    def schedule_lint(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, replacing a lint scheduled before."""
        pending = self._scheduled.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._scheduled[uri] = asyncio.get_running_loop().create_task(self._lint_and_publish(uri, delay))

    async def _lint_and_publish(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            document = self.workspace.text_documents.get(uri)
            if document is None or not _is_python(document):
                return
            text, version = document.source, document.version
            lint = await self.lint(uri, text)
            current = self.workspace.text_documents.get(uri)
            if current is None or current.source != text:
                return  # edited (or closed) meanwhile: the lint scheduled by that change publishes
            self.linted[uri] = lint
            found = diagnostics(lint, TextPositions(text, self.encoding), uri)
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=version))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a task's exception would otherwise vanish unseen
            self._log(types.MessageType.Error, f"devicelint could not publish diagnostics for {uri}:\n{traceback.format_exc()}")
        finally:
            if self._scheduled.get(uri) is asyncio.current_task():
                del self._scheduled[uri]

    def forget(self, uri: str) -> None:
        pending = self._scheduled.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.linted.pop(uri, None)
        self._fixed_texts.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def relint_open_documents(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.schedule_lint(uri, 0)

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        document = self.workspace.text_documents.get(uri)
        if document is None or not _is_python(document):
            return []
        text = document.source
        lint = self.linted.get(uri)
        if lint is None or lint.text != text:
            lint = await self.lint(uri, text)
        only = params.context.only
        fixed_text = None
        if _requested(FIX_ALL_KIND, only) and any(f.fix is not None and f.fix.safe for f in lint.findings):
            fixed_text = await self._fixed_text(uri, lint)
        try:
            return await self._in_worker(code_actions, lint, uri, self.encoding, params.range, only, fixed_text)
        except Exception:  # noqa: BLE001
            self._log(types.MessageType.Error, f"devicelint could not build code actions for {uri}:\n{traceback.format_exc()}")
            return []

    async def _fixed_text(self, uri: str, lint: DocumentLint) -> Optional[str]:
        """The text after every safe fix, kept per document: editors ask for code actions at
        every cursor move, and fixing re-lints."""
        cached = self._fixed_texts.get(uri)
        if cached is not None and cached[0] == lint.text:
            return cached[1]
        try:
            fixed = await self._in_worker(fix_all, lint)
        except Exception:  # noqa: BLE001
            self._log(types.MessageType.Error, f"devicelint could not fix {uri}:\n{traceback.format_exc()}")
            return None
        self._fixed_texts[uri] = (lint.text, fixed)
        return fixed

    def stop_worker(self) -> None:
        for pending in self._scheduled.values():
            pending.cancel()
        self._scheduled.clear()
        self._worker.shutdown(wait=False, cancel_futures=True)


def build_server(debounce_seconds: float = DEBOUNCE_SECONDS) -> DevicelintLanguageServer:
    server = DevicelintLanguageServer(debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        server.schedule_lint(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        server.schedule_lint(params.text_document.uri, server.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("/pyproject.toml"):
            server.relint_open_documents()  # its [tool.devicelint] may have changed
        else:
            server.schedule_lint(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.forget(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return await server.code_actions(params)

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.stop_worker()

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    build_server().start_io()
