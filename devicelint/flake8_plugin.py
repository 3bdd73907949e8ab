"""flake8 entry point: ``flake8 --select DL`` runs devicelint on each file with the same rules
and suppressions as ``devicelint`` itself.

Each file is linted with the rules its own configuration selects (``[tool.devicelint]`` of the
nearest pyproject.toml at or above it, found as the command line finds it; its ``select``,
``extend-select``, ``ignore`` and ``per-file-ignores``), plus the rules named by
``--devicelint-extend-select`` and any off-by-default rule that flake8's own ``--select`` or
``--extend-select`` names by its exact code (``DL314``). ``# devicelint: ignore[...]`` and
``# devicelint: skip-file`` comments are honoured here; ``# noqa`` is left to flake8, which
also filters what is reported by its own selection.

flake8 wants 0-based columns from plugins and prints them 1-based, so the printed columns
equal devicelint's own.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from devicelint import __version__
from devicelint.config import ConfigError, ConfigResolver, Overrides
from devicelint.engine import lint_source
from devicelint.prefilter import may_use_pytorch
from devicelint.project import ProjectIndex
from devicelint.rules import all_rules
from devicelint.selection import SelectionError, validate_selectors
from devicelint.suppressions import parse_suppressions

_EXTEND_SELECT = "--devicelint-extend-select"
_WHERE = f"{_EXTEND_SELECT} (or `devicelint-extend-select` in flake8's configuration)"


class DevicelintChecker:
    name = "devicelint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str], options: Optional[argparse.Namespace] = None) -> None:
        self.filename = filename
        self.lines = lines
        self.options = options

    @classmethod
    def add_options(cls, parser: Any) -> None:
        parser.add_option(
            _EXTEND_SELECT,
            default="",
            metavar="CODES",
            parse_from_config=True,
            comma_separated_list=True,
            help="devicelint rules to run in addition to those [tool.devicelint] selects, by code or "
            "prefix (e.g. DL314, which is off by default). Also `devicelint-extend-select` in flake8's config.",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        """Refuse an unknown code before any file is linted, as ``devicelint`` does (exit 2)."""
        try:
            validate_selectors(getattr(options, "devicelint_extend_select", None) or (), _WHERE)
        except SelectionError as error:
            sys.stderr.write(f"devicelint: error: {error}\n")
            raise SystemExit(2) from None

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        if not may_use_pytorch(source):
            return  # devicelint skips such files unparsed; no configuration to look up either
        try:
            settings = ConfigResolver(Overrides(base=Path.cwd(), extend_select=self._extend_select())).for_path(self.filename)
        except ConfigError as error:
            # a broken configuration stops the run, as it stops `devicelint` (exit 2): flake8
            # prints an ExecutionError's message without a traceback, also from a worker process
            from flake8.exceptions import ExecutionError

            raise ExecutionError(f"devicelint: error: {error}") from None
        findings = lint_source(
            source, self.filename, settings.rules_for(self.filename), suppress=False, project=ProjectIndex().view(self.filename)
        )
        for finding in parse_suppressions(source, noqa=False).filter(findings):
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)

    def _extend_select(self) -> tuple[str, ...]:
        if self.options is None:
            return ()
        extra = validate_selectors(getattr(self.options, "devicelint_extend_select", None) or (), _WHERE)
        # flake8's own selection can only show what the plugin ran: naming an off-by-default
        # rule's exact code there (`flake8 --select DL314`) runs it, as `--extend-select` would
        off_by_default = {rule.code for rule in all_rules() if not rule.default_enabled}
        named = [
            code.strip().upper()
            for option in ("select", "extend_select")
            for code in getattr(self.options, option, None) or ()
            if code.strip().upper() in off_by_default
        ]
        return (*extra, *named)
