"""Realistic programs in fixtures/bad and fixtures/good: the findings are exactly the ones the
`# expect: DLnnn` markers on their lines name (none in good/), and each bad program's messages
are pinned by a golden file next to it, fixtures/bad/NAME.expected.

Refresh the golden files after a deliberate message change, then read the diff:

    DEVICELINT_UPDATE_GOLDENS=1 .venv/bin/python -m pytest tests/test_fixtures.py
"""

from __future__ import annotations

import difflib
import os

import pytest

from devicelint.findings import Finding
from devicelint.rules import all_rules
from devicelint.rules.base import expected_findings

from conftest import FIXTURES, ROOT, lint

BAD = sorted((FIXTURES / "bad").glob("*.py"))
GOOD = sorted((FIXTURES / "good").glob("*.py"))
UPDATE_GOLDENS = "DEVICELINT_UPDATE_GOLDENS"


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixture_findings_match_markers(path):
    code = path.read_text(encoding="utf-8")
    findings = lint(code, str(path), path.name[:5].upper())
    assert sorted((f.line, f.code) for f in findings) == sorted(expected_findings(code))
    rule_code = path.name[:5].upper()
    assert any(f.code == rule_code for f in findings)


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_fixture_is_clean(path):
    code = path.read_text(encoding="utf-8")
    assert expected_findings(code) == []
    assert [(f.line, f.code, f.message) for f in lint(code, str(path), path.name[:5].upper())] == []


def test_every_rule_has_bad_and_good_fixtures():
    bad = {path.name[:5].upper() for path in BAD}
    good = {path.name[:5].upper() for path in GOOD}
    for rule in all_rules():
        if rule.code in ("DL001", "DL002"):
            continue
        assert rule.code in bad, f"{rule.code} has no fixtures/bad program"
        assert rule.code in good, f"{rule.code} has no fixtures/good program"


def render_golden(findings: list[Finding]) -> str:
    """One line per finding, ``LINE:COL CODE [severity] message``, then `` [fix: safe|unsafe: title]``
    where it has a fix; its related notes follow, indented, as ``LINE:COL note: message``."""
    lines = []
    for finding in findings:
        line = f"{finding.line}:{finding.column} {finding.code} [{finding.severity.value}] {finding.message}"
        if finding.fix is not None:
            line += f" [fix: {'safe' if finding.fix.safe else 'unsafe'}: {finding.fix.title}]"
        lines.append(line)
        lines.extend(f"    {related.line}:{related.column} note: {related.message}" for related in finding.related)
    return "".join(line + "\n" for line in lines)


def _golden_for(path):
    return path.with_suffix(".expected")


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixture_messages_match_golden_file(path):
    code = path.read_text(encoding="utf-8")
    relative = path.relative_to(ROOT).as_posix()
    actual = render_golden(lint(code, relative, path.name[:5].upper()))
    golden = _golden_for(path)
    expected = golden.read_text(encoding="utf-8") if golden.exists() else None
    if actual == expected:
        return
    if os.environ.get(UPDATE_GOLDENS) == "1":
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"{UPDATE_GOLDENS}=1 is refused in CI (CI={os.environ['CI']}): refresh golden files locally and commit them", pytrace=False)
        golden.write_text(actual, encoding="utf-8", newline="\n")
        return
    refresh = f"if the new messages are right, refresh with: {UPDATE_GOLDENS}=1 .venv/bin/python -m pytest tests/test_fixtures.py"
    if expected is None:
        pytest.fail(f"{golden.relative_to(ROOT)} is missing; {refresh}", pytrace=False)
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile=f"{golden.relative_to(ROOT)} (golden)",
        tofile=f"{relative} (findings now)",
    )
    pytest.fail(f"findings of {relative} differ from its golden file:\n{''.join(diff)}\n{refresh}", pytrace=False)


def test_every_golden_file_has_its_fixture():
    goldens = {path.with_suffix(".py") for path in (FIXTURES / "bad").glob("*.expected")}
    assert sorted(goldens - set(BAD)) == [], "golden files whose fixture is gone: delete them"
    assert not list((FIXTURES / "good").glob("*.expected")), "fixtures/good programs have no findings: no golden files there"


def test_golden_rendering():
    from devicelint.findings import Fix, Related, Severity

    finding = Finding(
        "DL407", "optimizer-before-move", Severity.WARNING, "move the model first", "x.py", 13, 5, 13, 20,
        fix=Fix("Move it", (), safe=False), related=(Related("`model` is moved here", 15, 5),),
    )
    assert render_golden([finding]) == (
        "13:5 DL407 [warning] move the model first [fix: unsafe: Move it]\n"
        "    15:5 note: `model` is moved here\n"
    )
    assert render_golden([]) == ""
