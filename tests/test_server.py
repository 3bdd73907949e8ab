"""`devicelint server`: a real LSP exchange with the server in a subprocess, through pygls's own
client, plus the position arithmetic (LSP counts UTF-16 units on lines split at \\r\\n, \\r, \\n)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import AsyncIterator, Optional

from click.testing import CliRunner
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from devicelint.cli import main
from devicelint.engine import lint_source
from devicelint.findings import Finding, Related, Severity
from devicelint.rules import all_rules
from devicelint.server import FIX_ALL_KIND, TextPositions, diagnostic, suppression_edit

#: how long any one exchange may take before the test fails instead of hanging
TIMEOUT = 20

# line 7 has an astral character (two UTF-16 units, one code point) before the finding
BUGGY = '''import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_template():
    label = "\U0001F600"; template = torch.zeros(16); template.cuda()
    return template, label


def sample(model, latents, steps):
    for step in steps:
        noise = torch.randn(latents.shape).to(device)
        timesteps = torch.full((latents.shape[0],), step, dtype=torch.long).to(device)
        latents = model(latents + noise, timesteps)
    return latents
'''
BUGGY_LINE = 'label = "\U0001F600"; template = torch.zeros(16); template.cuda()'
#: where `template.cuda()` is on line 7 (0-based 6) in UTF-16 units: the emoji counts twice
DL101_START = 4 + BUGGY_LINE.index("template.cuda()") + 1
DL101_RANGE = ((6, DL101_START), (6, DL101_START + len("template.cuda()")))
CLEAN = BUGGY.replace("template.cuda()", "template = template.cuda()")


class RecordingClient(LanguageClient):
    """Keeps every publishDiagnostics and log message the server sends, and its exit status."""

    def __init__(self) -> None:
        super().__init__("devicelint-tests", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = defaultdict(list)
        self.log_messages: list[str] = []
        self.returncode: Optional[int] = None
        self._arrived = asyncio.Event()

        @self.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published[params.uri].append(params)
            self._arrived.set()

        @self.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.log_messages.append(params.message)

    async def server_exit(self, server: asyncio.subprocess.Process) -> None:
        self.returncode = server.returncode

    async def publication(self, uri: str, index: int) -> list[types.Diagnostic]:
        """The ``index``-th set of diagnostics published for ``uri`` (waiting for it)."""

        async def arrived() -> None:
            while len(self.published[uri]) <= index:
                self._arrived.clear()
                await self._arrived.wait()

        await asyncio.wait_for(arrived(), TIMEOUT)
        return list(self.published[uri][index].diagnostics)

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )
        return uri

    def replace_text(self, uri: str, text: str, version: int) -> None:
        self.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def code_actions(self, uri: str, at: types.Range, only: Optional[list[str]] = None) -> list[types.CodeAction]:
        request = self.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=at,
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        )
        return list(await asyncio.wait_for(request, TIMEOUT) or [])


@contextlib.asynccontextmanager
async def running_server(
    root: Path, *command: str
) -> AsyncIterator[tuple[RecordingClient, types.InitializeResult]]:
    """`python -m devicelint server` (or ``python COMMAND``) in ``root``, initialized; shut down
    and exited after. The project opts in to DL402 (off by default), whose findings carry a safe
    and an unsafe fix, unless ``root`` has its own configuration."""
    if not (root / "pyproject.toml").exists():
        (root / "pyproject.toml").write_text(OPTS_IN_TO_DL402, encoding="utf-8")
    client = RecordingClient()
    await client.start_io(sys.executable, *(command or ("-m", "devicelint", "server")), cwd=str(root))
    try:
        result = await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None, root_uri=root.as_uri())
            ),
            TIMEOUT,
        )
        client.initialized(types.InitializedParams())
        yield client, result
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
        await asyncio.wait_for(client.stop(), TIMEOUT)
    finally:
        server = client._server  # pygls keeps the process only there; never leave one behind
        if server is not None and server.returncode is None:
            server.kill()
            await server.wait()


def run(scenario) -> None:
    asyncio.run(asyncio.wait_for(scenario, 3 * TIMEOUT))


def lsp_range(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    return types.Range(start=types.Position(*start), end=types.Position(*end))


def spans(diagnostics: list[types.Diagnostic]) -> list[tuple[str, tuple[int, int], tuple[int, int]]]:
    return [
        (str(d.code), (d.range.start.line, d.range.start.character), (d.range.end.line, d.range.end.character))
        for d in diagnostics
    ]


#: project configuration that turns on DL402 (advice, off by default)
OPTS_IN_TO_DL402 = '[tool.devicelint]\nextend-select = ["DL402"]\n'


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions) to ``text`` as an editor would: from the last one."""
    positions = TextPositions(text)
    located = [(positions.offset_at(e.range.start), positions.offset_at(e.range.end), e.new_text) for e in edits]
    for start, end, new_text in sorted(located, reverse=True):
        text = text[:start] + new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None
    return list(action.edit.changes[uri])


def fixed_by_cli(tmp_path: Path, text: str, monkeypatch) -> str:
    """What `devicelint --fix` writes for ``text``."""
    target = tmp_path / "cli" / "model.py"
    target.parent.mkdir()
    target.write_text(text, encoding="utf-8")
    monkeypatch.chdir(target.parent)
    result = CliRunner().invoke(main, ["--fix", "--no-cache", "--jobs", "1", "model.py"])
    assert result.exit_code in (0, 1), result.output
    return target.read_text(encoding="utf-8")


def test_diagnostics_follow_open_change_and_close(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as (client, initialized):
            capabilities = initialized.capabilities
            assert capabilities.code_action_provider is not None
            assert FIX_ALL_KIND in capabilities.code_action_provider.code_action_kinds
            assert types.CodeActionKind.QuickFix in capabilities.code_action_provider.code_action_kinds
            assert initialized.server_info.name == "devicelint"

            uri = client.open(tmp_path / "model.py", BUGGY)
            opened = await client.publication(uri, 0)
            assert spans(opened) == [
                ("DL101", *DL101_RANGE),
                ("DL402", (12, 16), (12, 53)),
                ("DL402", (13, 20), (13, 86)),
            ]
            discarded = opened[0]
            assert discarded.source == "devicelint"
            assert discarded.severity == types.DiagnosticSeverity.Error
            assert "thrown away" in discarded.message
            assert opened[1].severity == types.DiagnosticSeverity.Information

            client.replace_text(uri, CLEAN, version=2)
            changed = await client.publication(uri, 1)
            assert spans(changed) == [("DL402", (12, 16), (12, 53)), ("DL402", (13, 20), (13, 86))]

            client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
            assert await client.publication(uri, 2) == []

            # text that is not Python, or that Python cannot hold, is a diagnostic, not a crash
            unfinished = client.open(tmp_path / "unfinished.py", "import torch\nx = torch.zeros(3\n")
            assert [d.code for d in await client.publication(unfinished, 0)] == ["DL001"]
            nul = client.open(tmp_path / "nul.py", "import torch\n\x00\n")
            assert [(d.code, d.range.start.line) for d in await client.publication(nul, 0)] == [("DL001", 1)]
            client.replace_text(unfinished, BUGGY, version=2)
            assert [d.code for d in await client.publication(unfinished, 1)] == ["DL101", "DL402", "DL402"]
        assert client.returncode == 0

    run(scenario())


def test_quick_fix_equals_what_the_cli_fix_writes(tmp_path, monkeypatch):
    single = BUGGY.split("\n\ndef sample")[0] + "\n"  # only the DL101 finding: --fix applies just it

    async def scenario():
        async with running_server(tmp_path) as (client, _):
            uri = client.open(tmp_path / "model.py", single)
            assert [d.code for d in await client.publication(uri, 0)] == ["DL101"]
            actions = await client.code_actions(uri, lsp_range(DL101_RANGE[0], DL101_RANGE[0]))
            return uri, actions

    uri, actions = asyncio.run(asyncio.wait_for(scenario(), 3 * TIMEOUT))
    titles = [action.title for action in actions]
    assert titles == ["DL101: Assign the result to `template`", "Suppress DL101 on this line", "Fix all safe devicelint problems"]
    quick_fix, suppress, fix_all = actions
    assert quick_fix.kind == types.CodeActionKind.QuickFix and quick_fix.is_preferred
    assert [d.code for d in quick_fix.diagnostics] == ["DL101"]
    expected = fixed_by_cli(tmp_path, single, monkeypatch)
    assert expected != single
    assert apply_edits(single, edits_of(quick_fix, uri)) == expected
    assert fix_all.kind == FIX_ALL_KIND
    assert apply_edits(single, edits_of(fix_all, uri)) == expected
    suppressed = apply_edits(single, edits_of(suppress, uri))
    assert "template.cuda()  # devicelint: ignore[DL101]\n" in suppressed
    assert lint_source(suppressed, "model.py", [rule for rule in all_rules() if rule.default_enabled]) == []


def test_unsafe_fixes_are_labelled_and_fix_all_applies_only_safe_ones(tmp_path, monkeypatch):
    async def scenario():
        async with running_server(tmp_path) as (client, _):
            uri = client.open(tmp_path / "model.py", BUGGY)
            await client.publication(uri, 0)
            unsafe = await client.code_actions(uri, lsp_range((12, 20), (12, 20)), only=[types.CodeActionKind.QuickFix])
            safe = await client.code_actions(uri, lsp_range((13, 30), (13, 30)), only=[types.CodeActionKind.QuickFix])
            everything = await client.code_actions(uri, lsp_range((0, 0), (0, 0)), only=[types.CodeActionKind.SourceFixAll])
            return uri, unsafe, safe, everything

    uri, unsafe, safe, everything = asyncio.run(asyncio.wait_for(scenario(), 3 * TIMEOUT))
    assert unsafe[0].title == "DL402: Create it on the device: `device=device` (unsafe)"
    assert unsafe[0].is_preferred is False
    assert safe[0].title == "DL402: Create it on the device: `device=device`"
    assert safe[0].is_preferred is True
    assert all(action.kind == types.CodeActionKind.QuickFix for action in [*unsafe, *safe])
    # asked for source.fixAll only: just the fix-all action, and it does what --fix does
    assert [action.kind for action in everything] == [FIX_ALL_KIND]
    fixed = apply_edits(BUGGY, edits_of(everything[0], uri))
    assert fixed == fixed_by_cli(tmp_path, BUGGY, monkeypatch)
    assert "template = template.cuda()" in fixed and "torch.randn(latents.shape).to(device)" in fixed


def test_the_project_configuration_of_each_document_applies(tmp_path):
    configured = tmp_path / "configured"
    configured.mkdir()
    (configured / "pyproject.toml").write_text('[tool.devicelint]\nignore = ["DL402"]\n', encoding="utf-8")
    per_file = tmp_path / "per_file"
    per_file.mkdir()
    (per_file / "pyproject.toml").write_text(
        '[tool.devicelint]\nextend-select = ["DL402"]\n[tool.devicelint.per-file-ignores]\n"model.py" = ["DL101"]\n', encoding="utf-8"
    )
    excluded = tmp_path / "excluded"
    excluded.mkdir()
    (excluded / "pyproject.toml").write_text(
        '[tool.devicelint]\nextend-exclude = ["model.py"]\nforce-exclude = true\n', encoding="utf-8"
    )
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text('[tool.devicelint]\nignore = ["DL999"]\n', encoding="utf-8")

    async def scenario():
        async with running_server(tmp_path) as (client, _):
            plain = client.open(tmp_path / "model.py", BUGGY)
            ignoring = client.open(configured / "model.py", BUGGY)
            ignoring_here = client.open(per_file / "model.py", BUGGY)
            misconfigured = client.open(broken / "model.py", BUGGY)
            skipped = client.open(excluded / "model.py", BUGGY)
            assert [d.code for d in await client.publication(plain, 0)] == ["DL101", "DL402", "DL402"]
            assert [d.code for d in await client.publication(ignoring, 0)] == ["DL101"]
            assert [d.code for d in await client.publication(ignoring_here, 0)] == ["DL402", "DL402"]
            problem = await client.publication(misconfigured, 0)
            assert await client.publication(skipped, 0) == []
            # the fix-all action must not bring back what per-file-ignores turned off
            fix_all = await client.code_actions(ignoring_here, lsp_range((0, 0), (0, 0)), only=[FIX_ALL_KIND])
            assert apply_edits(BUGGY, edits_of(fix_all[0], ignoring_here)).count("template.cuda()") == 1
            # a configuration fixed and saved applies to the open documents at once
            (broken / "pyproject.toml").write_text('[tool.devicelint]\nextend-select = ["DL402"]\nignore = ["DL101"]\n', encoding="utf-8")
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=(broken / "pyproject.toml").as_uri()))
            )
            repaired = await client.publication(misconfigured, 1)
            return problem, repaired

    problem, repaired = asyncio.run(asyncio.wait_for(scenario(), 3 * TIMEOUT))
    assert len(problem) == 1 and problem[0].severity == types.DiagnosticSeverity.Error
    assert problem[0].message.startswith("devicelint: error: unknown rule code or prefix 'DL999'")
    assert [d.code for d in repaired] == ["DL402", "DL402"]


def test_a_crash_is_a_diagnostic_and_a_log_message_and_the_server_goes_on(tmp_path):
    crashing = (
        "import devicelint.server as server\n"
        "def crash(*args):\n"
        "    raise RuntimeError('boom')\n"
        "server.lint_document = crash\n"
        "server.serve()\n"
    )

    async def scenario():
        async with running_server(tmp_path, "-c", crashing) as (client, _):
            uri = client.open(tmp_path / "model.py", BUGGY)
            crashed = await client.publication(uri, 0)
            # the server still answers, with nothing to offer for a document it cannot lint
            assert await client.code_actions(uri, lsp_range((0, 0), (9, 0))) == []
            client.replace_text(uri, CLEAN, version=2)
            assert len(await client.publication(uri, 1)) == 1
        assert client.returncode == 0
        return crashed, client.log_messages

    crashed, log_messages = asyncio.run(asyncio.wait_for(scenario(), 3 * TIMEOUT))
    assert [(d.message, d.severity, d.range.start.line) for d in crashed] == [
        ("devicelint crashed on this document: RuntimeError: boom", types.DiagnosticSeverity.Error, 0)
    ]
    assert any("Traceback" in message and "RuntimeError: boom" in message for message in log_messages)


def test_without_pygls_the_command_says_what_to_install():
    code = "import sys\nsys.modules['pygls'] = None\nfrom devicelint.cli import main\nmain(['server'])\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 2
    assert result.stderr == "devicelint: error: devicelint server needs pygls: pip install 'devicelint[server]'\n"


def test_positions_count_utf16_units_and_only_lsp_line_breaks():
    text = "a\x0cb = '\U0001F600é'; x\r\ny\rz\n"
    positions = TextPositions(text)
    # devicelint's line 1 runs to the \n; LSP's line 0 ends at the \r\n (the form feed is no break)
    x = positions.offset(1, text.index("x") + 1)
    assert text[x] == "x"
    assert positions.position(x) == types.Position(line=0, character=len("a\x0cb = '") + 2 + 1 + len("'; "))
    assert positions.offset_at(positions.position(x)) == x
    assert positions.position(text.index("z")) == types.Position(line=2, character=0)
    # past the end of a line means its end, before the line break
    assert positions.offset_at(types.Position(line=0, character=99)) == text.index("\r")
    assert positions.offset_at(types.Position(line=9, character=0)) == len(text)
    utf8 = TextPositions(text, types.PositionEncodingKind.Utf8)
    assert utf8.position(x).character == len("a\x0cb = '".encode()) + 4 + 2 + len("'; ")
    utf32 = TextPositions(text, types.PositionEncodingKind.Utf32)
    assert utf32.position(x).character == text.index("x")


def test_related_locations_become_related_information():
    text = "import torch\nx = torch.zeros(3)\ny = x.cuda() + x\n"
    finding = Finding(
        "DL201", "mixed-device-op", Severity.ERROR, "mixed", "x.py", 3, 5, 3, 17,
        related=(Related("`x` was created on the CPU here", 2, 5),),
    )
    found = diagnostic(finding, TextPositions(text), "file:///x.py")
    assert found.code == "DL201" and found.source == "devicelint"
    assert [(r.message, r.location.uri, r.location.range.start) for r in found.related_information] == [
        ("`x` was created on the CPU here", "file:///x.py", types.Position(line=1, character=4))
    ]


def _finding(line: int, code: str = "DL101") -> Finding:
    return Finding(code, "discarded-move", Severity.ERROR, "message", "x.py", line, 1, line, 5)


def test_suppression_joins_an_existing_list_and_never_goes_inside_a_string():
    text = "x.cuda()  # devicelint: ignore[DL404]\n"
    start, end, insert = suppression_edit(text, _finding(1), TextPositions(text))
    assert text[:start] + insert + text[end:] == "x.cuda()  # devicelint: ignore[DL404, DL101]\n"
    # line 1 ends inside a triple-quoted string, so the comment goes on the finding's last line
    text = 'f(x, """a\nb""").cuda()   \n'
    finding = Finding("DL101", "discarded-move", Severity.ERROR, "m", "x.py", 1, 1, 2, 12)
    start, end, insert = suppression_edit(text, finding, TextPositions(text))
    assert text[:start] + insert + text[end:] == 'f(x, """a\nb""").cuda()  # devicelint: ignore[DL101]\n'
    # a backslash continuation takes no comment, and nothing else is possible
    assert suppression_edit("x = a + \\\n    b\n", _finding(1), TextPositions("x = a + \\\n    b\n")) is None
