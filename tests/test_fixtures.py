"""Realistic programs in fixtures/bad and fixtures/good: the findings are exactly the ones the
`# expect: DLnnn` markers on their lines name (none in good/)."""

from __future__ import annotations

import pytest

from devicelint.rules import all_rules
from devicelint.rules.base import expected_findings

from conftest import FIXTURES, lint

BAD = sorted((FIXTURES / "bad").glob("*.py"))
GOOD = sorted((FIXTURES / "good").glob("*.py"))


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
