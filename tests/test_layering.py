"""Import layering: the engine imports the rules, so no rule module may import the engine (what
rules need of it, RuleContext, FixSpec and NodeEdit, lives in devicelint.rule_api)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import devicelint.rules

RULES = Path(devicelint.rules.__file__).resolve().parent
RULE_MODULES = sorted(RULES.glob("*.py"))
FORBIDDEN = "devicelint.engine"


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    return _imports_in(path.read_text(encoding="utf-8"), str(path))


def _imports_in(text: str, filename: str = "<text>") -> list[tuple[int, str]]:
    """Every module a rule module's ``text`` imports, anywhere (``TYPE_CHECKING`` blocks and
    function bodies included), as absolute dotted names; ``from X import y`` also yields
    ``X.y``, so ``from devicelint import engine`` counts."""
    package = "devicelint.rules"
    tree = ast.parse(text, filename)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
    return found


def _is_engine(module: str) -> bool:
    return module == FORBIDDEN or module.startswith(FORBIDDEN + ".")


def test_the_import_scan_sees_every_spelling():
    assert len(RULE_MODULES) > 20
    sample = RULES / "dl101_discarded_move.py"
    assert any(module == "devicelint.rule_api" for _, module in _imported_modules(sample))
    for spelling in ("import devicelint.engine", "from devicelint import engine", "from ..engine import lint_source"):
        nested = "if TYPE_CHECKING:\n    " + spelling + "\n"
        assert any(_is_engine(module) for _, module in _imports_in(nested)), spelling


@pytest.mark.parametrize("path", RULE_MODULES, ids=lambda p: p.name)
def test_no_rule_module_imports_the_engine(path):
    offending = [f"{path.name}:{line}: imports {module}" for line, module in _imported_modules(path) if _is_engine(module)]
    assert not offending, "rules must import FixSpec/NodeEdit/RuleContext from devicelint.rule_api:\n" + "\n".join(offending)


def test_loading_every_rule_does_not_load_the_engine():
    code = (
        "import sys\n"
        "from devicelint.rules import all_rules\n"
        "assert len(all_rules()) > 20\n"
        "assert 'devicelint.engine' not in sys.modules, 'a rule loaded devicelint.engine'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
