"""Inline suppressions: ``# noqa``, ``# noqa: DL101,DL201``, ``# devicelint: ignore[DL101]``,
and ``# devicelint: skip-file``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from devicelint.findings import Finding

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*devicelint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?")
_SKIP_FILE = re.compile(r"#\s*devicelint:\s*skip-file\b")
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

ALL_CODES = "*"


@dataclass
class Suppressions:
    #: line -> codes silenced there ({"*"} silences every code)
    by_line: dict[int, set[str]] = field(default_factory=dict)

    def silences(self, finding: Finding) -> bool:
        for line in {finding.line, finding.end_line}:
            codes = self.by_line.get(line)
            if codes and (ALL_CODES in codes or finding.code in codes):
                return True
        return False

    def filter(self, findings: Iterable[Finding]) -> list[Finding]:
        return [finding for finding in findings if not self.silences(finding)]


def skips_file(text: str) -> bool:
    return "devicelint" in text and _SKIP_FILE.search(text) is not None


def parse_suppressions(text: str, *, noqa: bool = True) -> Suppressions:
    """Every suppression comment of ``text``; ``noqa=False`` reads only devicelint's own
    (flake8, which runs the plugin, applies ``# noqa`` itself, or not: ``--disable-noqa``)."""
    suppressions = Suppressions()
    if ("noqa" not in text or not noqa) and "devicelint" not in text:
        return suppressions
    # Python's line breaks only: str.splitlines() also breaks at form feeds and U+2028, which
    # would put every comment below one on the wrong line
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if "#" not in line:
            continue
        codes: set[str] = set()
        for match in _NOQA.finditer(line) if noqa else ():
            listed = match.group("codes")
            codes.update(_CODE.findall(listed.upper()) if listed else {ALL_CODES})
        for match in _IGNORE.finditer(line):
            listed = match.group("codes")
            found = _CODE.findall(listed.upper()) if listed else []
            codes.update(found if found else {ALL_CODES})
        if codes:
            suppressions.by_line[number] = codes
    return suppressions
