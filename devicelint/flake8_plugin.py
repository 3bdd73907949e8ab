"""flake8 entry point: ``flake8 --select DL`` runs devicelint's default rules on each file.

flake8 owns selection, ``# noqa`` handling and output; this class only reports. flake8 wants
0-based columns from plugins and prints them 1-based, so the printed columns equal
devicelint's own.
"""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from devicelint import __version__
from devicelint.engine import lint_source
from devicelint.rules import all_rules


class DevicelintChecker:
    name = "devicelint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        rules = [rule for rule in all_rules() if rule.default_enabled]
        for finding in lint_source(source, self.filename, rules, suppress=False):
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
