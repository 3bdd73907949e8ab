"""Every rule's embedded examples are tests: valid ones give no finding at all, invalid ones
give exactly the findings their `# expect:` markers name, and fixed ones match after the fix."""

from __future__ import annotations

import libcst as cst
import pytest

from devicelint.engine import lint_source
from devicelint.fixer import apply_fixes
from devicelint.rules import all_rules
from devicelint.rules.base import expected_findings

from conftest import lint

VALID = [pytest.param(rule, code, id=f"{rule.code}-valid-{i}") for rule in all_rules() for i, code in enumerate(rule.valid)]
INVALID = [pytest.param(rule, example, id=f"{rule.code}-invalid-{i}") for rule in all_rules() for i, example in enumerate(rule.invalid)]


@pytest.mark.parametrize("rule, code", VALID)
def test_valid_example_has_no_finding(rule, code):
    assert [(f.line, f.code, f.message) for f in lint(code, rule_code=rule.code)] == []


@pytest.mark.parametrize("rule, example", INVALID)
def test_invalid_example_flags_marked_lines(rule, example):
    findings = lint(example.code, rule_code=rule.code)
    assert sorted((f.line, f.code) for f in findings) == sorted(expected_findings(example.code))
    assert any(f.code == rule.code for f in findings)


@pytest.mark.parametrize("rule, example", [p for p in INVALID if p.values[1].fixed is not None])
def test_fix_gives_the_documented_result(rule, example):
    # an unsafe fix is documented as it applies under --unsafe-fixes
    unsafe = rule.fix_safety == "unsafe"
    fixed, applied = apply_fixes(example.code, lint(example.code, rule_code=rule.code), unsafe=unsafe)
    assert fixed == example.fixed
    cst.parse_module(fixed)
    again, applied_again = apply_fixes(fixed, [f for f in lint(fixed, rule_code=rule.code) if f.code == rule.code], unsafe=unsafe)
    assert applied_again == 0 or again == fixed


def test_every_rule_with_a_fix_documents_one_fixed_example():
    for rule in all_rules():
        if rule.fix_safety is not None:
            assert any(example.fixed for example in rule.invalid), rule.code


def test_every_checking_rule_has_valid_and_invalid_examples():
    for rule in all_rules():
        if rule.code == "DL002":
            continue
        assert rule.invalid, rule.code
        if rule.code != "DL001":
            assert rule.valid, rule.code


def test_one_expression_one_finding_where_a_rule_yields_to_another():
    source = (
        "import torch\n"
        "def train(loader, device):\n"
        "    for batch in loader:\n"
        "        ones = torch.ones(2, 2).to(device)\n"
        "        scratch = torch.zeros(batch.shape).to(device)\n"
    )
    everything = [(f.code, f.line) for f in lint_source(source, "train.py", all_rules())]
    # line 4: a constant, hoisted by DL401's advice; line 5 depends on the batch: DL402 alone
    assert everything == [("DL401", 4), ("DL402", 5)]
    only_dl402 = [(f.code, f.line) for f in lint_source(source, "train.py", [r for r in all_rules() if r.code == "DL402"])]
    assert only_dl402 == [("DL402", 4), ("DL402", 5)]
