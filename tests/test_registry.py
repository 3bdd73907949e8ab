from __future__ import annotations

import re

from click.testing import CliRunner

from devicelint.cli import main
from devicelint.rules import all_rules

SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead"]


def test_codes_are_unique_sorted_and_well_formed():
    codes = [rule.code for rule in all_rules()]
    assert codes == sorted(set(codes))
    for rule in all_rules():
        assert re.fullmatch(r"DL\d{3}", rule.code)
        assert re.fullmatch(r"[a-z0-9-]+", rule.name)
        assert rule.__module__.rsplit(".", 1)[-1].startswith(rule.code.lower() + "_")


def test_every_rule_documents_the_four_sections():
    for rule in all_rules():
        docs = rule.docs()
        assert list(docs) == SECTIONS, rule.code
        assert all(body.strip() for body in docs.values()), rule.code


def test_rule_command_prints_generated_docs():
    runner = CliRunner()
    for rule in all_rules():
        result = runner.invoke(main, ["rule", rule.code.lower()])
        assert result.exit_code == 0
        assert result.stdout.startswith(f"# {rule.code} {rule.name} ({rule.severity.value})")
        for section in SECTIONS:
            assert f"## {section}" in result.stdout


def test_rule_command_rejects_unknown_code():
    result = CliRunner().invoke(main, ["rule", "DL999"])
    assert result.exit_code == 2
    assert "unknown rule code 'DL999'" in result.stderr


def test_readme_rule_table_matches_the_rules():
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    rows = [line for line in readme.splitlines() if line.startswith("| DL")]
    expected = []
    for rule in all_rules():
        fix = {"safe": "safe", "unsafe": "unsafe", None: ""}[rule.fix_safety]
        expected.append(f"| {rule.code} | {rule.name} | {rule.severity.value} | {fix} | {rule.summary} |")
    assert rows == expected
