"""Reporters turn Findings into text; they never see a syntax tree."""

from __future__ import annotations

import json
from collections import Counter
from typing import Optional, Sequence

from devicelint.findings import Finding, Severity

FORMATS = ("text", "json", "github", "sarif")


def render(findings: Sequence[Finding], fmt: str, *, unsafe_fixes: bool = False) -> str:
    """``unsafe_fixes``: whether ``--fix`` would apply unsafe fixes too, so that the text
    format marks (``[*]``) and counts exactly the fixes ``--fix`` applies."""
    if fmt == "json":
        return json.dumps([finding.to_dict() for finding in findings], indent=2) + "\n"
    if fmt == "github":
        return "".join(_github(finding) + "\n" for finding in findings)
    if fmt == "sarif":
        from devicelint.report.sarif import render_sarif

        return render_sarif(findings)
    return _text(findings, unsafe_fixes)


def applicable(finding: Finding, unsafe_fixes: bool) -> bool:
    """Would ``--fix`` (with ``--unsafe-fixes`` when ``unsafe_fixes``) fix this finding?"""
    return finding.fix is not None and (finding.fix.safe or unsafe_fixes)


def _text(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    lines = []
    for finding in findings:
        marker = " [*]" if applicable(finding, unsafe_fixes) else ""
        lines.append(f"{location(finding.path, finding.cell, finding.line, finding.column)}: {finding.code}{marker} {finding.message}")
        for related in finding.related:
            lines.append(f"    {location(related.path or finding.path, related.cell, related.line, related.column)}: note: {related.message}")
    lines.extend(summary(findings, unsafe_fixes))
    return "\n".join(lines) + "\n"


def location(path: str, cell: Optional[int], line: int, column: int) -> str:
    """``train.py:4:9``, or in a notebook ``train.ipynb:cell 3:4:9`` (as ruff writes it)."""
    return f"{path}:cell {cell}:{line}:{column}" if cell is not None else f"{path}:{line}:{column}"


def summary(findings: Sequence[Finding], unsafe_fixes: bool = False) -> list[str]:
    """The closing lines, worded as ruff words them: the count, then what ``--fix`` would
    fix and how many more fixes ``--unsafe-fixes`` would enable."""
    if not findings:
        return ["All checks passed."]
    noun = "finding" if len(findings) == 1 else "findings"
    lines = [f"Found {len(findings)} {noun}."]
    fixable = sum(1 for finding in findings if applicable(finding, unsafe_fixes))
    hidden = sum(1 for finding in findings if finding.fix is not None and not applicable(finding, unsafe_fixes))
    hint = ""
    if hidden:
        hint = f" ({hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option)"
    if fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option{hint}.")
    elif hidden:
        lines.append(f"No fixes available{hint}.")
    return lines


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(finding: Finding) -> str:
    level = _GITHUB_LEVEL[finding.severity]
    line, column, message = finding.line, finding.column, finding.message
    if finding.cell is not None:
        # an annotation can only point at a line of the file, and a cell's line is not one of
        # the notebook's JSON: anchor it at the top (as ruff does) and say where in the text
        line, column, message = 1, 1, f"cell {finding.cell}:{finding.line}:{finding.column}: {message}"
    return (
        f"::{level} file={_escape_property(finding.path)},line={line},col={column},"
        f"title={_escape_property(finding.code)}::{_escape_data(message)}"
    )


def statistics(findings: Sequence[Finding], fmt: str, *, unsafe_fixes: bool = False) -> str:
    counts = Counter(finding.code for finding in findings)
    names = {finding.code: finding.name for finding in findings}
    fixable = Counter(finding.code for finding in findings if applicable(finding, unsafe_fixes))
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        return json.dumps(
            [{"code": code, "name": names[code], "count": count, "fixable": fixable[code]} for code, count in rows],
            indent=2,
        ) + "\n"
    width = max((len(str(count)) for _, count in rows), default=1)
    lines = [f"{count:>{width}}  {code}  {'[*]' if fixable[code] else '   '} {names[code]}" for code, count in rows]
    lines.extend(summary(findings, unsafe_fixes))
    return "\n".join(lines) + "\n"
