from __future__ import annotations

from pathlib import Path

import pytest

from devicelint.engine import lint_source
from devicelint.rules import all_rules

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def rules_for(rule_code=None):
    """The default rules plus the rule under test: an off-by-default rule (DL314) is opt-in, so
    other rules' examples and fixtures need not satisfy it."""
    return [rule for rule in all_rules() if rule.default_enabled or rule.code == rule_code]


def lint(code: str, path: str = "example.py", rule_code=None):
    return lint_source(code, path, rules_for(rule_code))


def line_codes(code: str) -> list[tuple[int, str]]:
    """The (line, code) pairs the default rules report on ``code``, sorted."""
    return sorted((finding.line, finding.code) for finding in lint(code))


@pytest.fixture
def write(tmp_path: Path):
    def _write(relative: str, content, mode: str = "w") -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


def pytest_collection_modifyitems(config, items):
    """Tests marked ``cuda`` need a real GPU: skipped, with the reason, on machines without one."""
    cuda_tests = [item for item in items if item.get_closest_marker("cuda")]
    if not cuda_tests:
        return
    try:
        import torch

        available = torch.cuda.is_available()
    except ImportError:
        available = False
    if not available:
        skip = pytest.mark.skip(reason="needs a CUDA GPU; none is present")
        for item in cuda_tests:
            item.add_marker(skip)
