"""--fix / --diff / --unsafe-fixes and the guarantees a fixer owes the user's files."""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from devicelint.cli import main
from devicelint.findings import Edit, Finding, Fix, Severity
from devicelint.fixer import apply_fixes, fix_source
from devicelint.rules import all_rules

from conftest import FIXTURES, lint, rules_for

BAD = sorted((FIXTURES / "bad").glob("*.py"))
BUG = "import torch\nx = torch.randn(3, 3)\nx.cuda()  # keep this comment\nstate = torch.load('a.pt')\nuse_gpu = torch.cuda.is_available()\n"
FIXED = "import torch\nx = torch.randn(3, 3)\nx = x.cuda()  # keep this comment\nstate = torch.load('a.pt', map_location=\"cpu\")\nuse_gpu = torch.cuda.is_available()\n"


def run(args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [*args, "--jobs", "1", "--no-cache"])
    finally:
        os.chdir(old)


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_fixing_every_fixture_parses_is_idempotent_and_touches_only_fixed_lines(path):
    original = path.read_text(encoding="utf-8")
    rules = rules_for(path.name[:5].upper())
    findings = lint(original, str(path), path.name[:5].upper())
    fixed, applied, remaining = fix_source(original, str(path), rules)
    cst.parse_module(fixed)
    again, applied_again, _ = fix_source(fixed, str(path), rules)
    assert again == fixed and applied_again == 0
    fixable_lines = {line for f in findings if f.fix is not None for line in range(f.line, f.end_line + 1)}
    assert applied == len([f for f in findings if f.fix is not None and f.fix.safe])
    assert not any(f.fix is not None and f.fix.safe for f in remaining)
    unsafe, _, _ = fix_source(original, str(path), all_rules(), unsafe=True)
    cst.parse_module(unsafe)
    matcher = difflib.SequenceMatcher(a=original.splitlines(), b=fixed.splitlines())
    for tag, start, end, _, _ in matcher.get_opcodes():
        if tag != "equal":
            assert set(range(start + 1, end + 1)) <= fixable_lines, (tag, start, end)


def test_fix_writes_the_file_and_reports_what_is_left(tmp_path, write):
    target = write("train.py", BUG)
    result = run(["train.py", "--fix"], tmp_path)
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == FIXED
    assert "Applied 2 fixes in 1 file." in result.stderr
    assert result.stdout == "All checks passed.\n"


def test_fix_keeps_bom_encoding_declaration_line_endings_and_mode(tmp_path, write):
    bom = write("bom.py", b"\xef\xbb\xbf" + BUG.replace("\n", "\r\n").encode())
    latin = write("latin.py", ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + BUG).encode("latin-1"))
    os.chmod(latin, 0o751)
    assert run([".", "--fix"], tmp_path).exit_code == 0
    assert bom.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXED).encode("latin-1")
    assert stat.S_IMODE(os.stat(latin).st_mode) == 0o751


def test_diff_prints_and_writes_nothing(tmp_path, write):
    target = write("train.py", BUG)
    result = run(["train.py", "--diff"], tmp_path)
    assert result.exit_code == 1
    assert target.read_text(encoding="utf-8") == BUG
    assert "--- a/train.py\n+++ b/train.py\n" in result.stdout
    assert "-x.cuda()  # keep this comment\n" in result.stdout
    assert "+x = x.cuda()  # keep this comment\n" in result.stdout
    write("clean.py", "import torch\n")
    clean = run(["clean.py", "--diff"], tmp_path)
    assert clean.exit_code == 0 and clean.stdout == ""


def test_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, write, monkeypatch):
    target = write("train.py", BUG)

    def interrupted(source, destination):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    result = run(["train.py", "--fix"], tmp_path)
    assert result.exit_code != 0
    assert target.read_text(encoding="utf-8") == BUG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]


def test_a_fix_that_would_not_parse_is_never_written(tmp_path, write, monkeypatch):
    from devicelint.rule_api import FixSpec, NodeEdit
    from devicelint.rules.dl101_discarded_move import DiscardedMove

    original = DiscardedMove._check_move

    def broken(self, event):
        self.ctx.report(event.node, "planted", fix=FixSpec("break it", (NodeEdit(event.node, "before", "def ("),)))

    monkeypatch.setattr(DiscardedMove, "_check_move", broken)
    target = write("train.py", "import torch\nx = torch.randn(3)\nx.cuda()\n")
    run(["train.py", "--fix"], tmp_path)
    assert target.read_text(encoding="utf-8") == "import torch\nx = torch.randn(3)\nx.cuda()\n"
    monkeypatch.setattr(DiscardedMove, "_check_move", original)


def _finding(line: int, column: int, content: str, safe: bool = True) -> Finding:
    edit = Edit(line, column, line, column, content)
    return Finding("DL101", "discarded-move", Severity.ERROR, "m", "f.py", line, column, line, column, Fix("t", (edit,), safe))


def test_overlapping_fixes_wait_for_the_next_pass():
    text = "abc\n"
    first, applied = apply_fixes(text, [_finding(1, 1, "X"), _finding(1, 1, "Y")])
    assert (first, applied) == ("Xabc\n", 1)


def test_unsafe_fixes_only_with_the_flag():
    text = "abc\n"
    assert apply_fixes(text, [_finding(1, 2, "U", safe=False)]) == (text, 0)
    assert apply_fixes(text, [_finding(1, 2, "U", safe=False)], unsafe=True) == ("aUbc\n", 1)


def test_every_rule_with_a_fix_says_whether_it_is_safe_and_why():
    for rule in all_rules():
        if rule.fix_safety is not None:
            assert rule.fix_safety in ("safe", "unsafe")
            assert "safe" in rule.docs()["Use instead"].lower(), rule.code


def test_unsafe_fixes_flag_is_accepted(tmp_path, write):
    write("train.py", BUG)
    result = run(["train.py", "--diff", "--unsafe-fixes"], tmp_path)
    assert result.exit_code == 1


def test_cuda_map_location_fix_maps_to_the_host_only_as_an_unsafe_fix():
    # without a `device` variable the fix is "cpu", which code using the loaded tensors as they
    # are may not suit: applied only with --unsafe-fixes
    code = "import torch\nuse_gpu = torch.cuda.is_available()\nstate = torch.load('ckpt.pt', map_location='cuda:0')\n"
    findings = [f for f in lint(code, rule_code="DL301") if f.code == "DL301"]
    assert [f.line for f in findings] == [3]
    assert apply_fixes(code, findings, unsafe=False)[1] == 0
    fixed, applied = apply_fixes(code, findings, unsafe=True)
    assert applied == 1
    assert fixed == "import torch\nuse_gpu = torch.cuda.is_available()\nstate = torch.load('ckpt.pt', map_location=\"cpu\")\n"
