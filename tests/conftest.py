from __future__ import annotations

from pathlib import Path

import pytest

from devicelint.engine import lint_source
from devicelint.rules import all_rules

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def lint(code: str, path: str = "example.py"):
    """Every rule, default-off ones included."""
    return lint_source(code, path, all_rules())


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
