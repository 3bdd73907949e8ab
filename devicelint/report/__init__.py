"""Reporters turn Findings into text; they never see a syntax tree."""

from __future__ import annotations

import json
from collections import Counter
from typing import Sequence

from devicelint.findings import Finding, Severity

FORMATS = ("text", "json", "github", "sarif")


def render(findings: Sequence[Finding], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([finding.to_dict() for finding in findings], indent=2) + "\n"
    if fmt == "github":
        return "".join(_github(finding) + "\n" for finding in findings)
    if fmt == "sarif":
        from devicelint.report.sarif import render_sarif

        return render_sarif(findings)
    return _text(findings)


def _text(findings: Sequence[Finding]) -> str:
    lines = []
    for finding in findings:
        marker = " [*]" if finding.fix is not None else ""
        lines.append(f"{finding.path}:{finding.line}:{finding.column}: {finding.code}{marker} {finding.message}")
        for related in finding.related:
            lines.append(f"    {finding.path}:{related.line}:{related.column}: note: {related.message}")
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"


def summary(findings: Sequence[Finding]) -> str:
    if not findings:
        return "All checks passed."
    fixable = sum(1 for finding in findings if finding.fix is not None)
    noun = "finding" if len(findings) == 1 else "findings"
    text = f"Found {len(findings)} {noun}"
    if fixable:
        text += f" ({fixable} with a fix, marked [*])"
    return text + "."


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(finding: Finding) -> str:
    level = _GITHUB_LEVEL[finding.severity]
    return (
        f"::{level} file={_escape_property(finding.path)},line={finding.line},col={finding.column},"
        f"title={_escape_property(finding.code)}::{_escape_data(finding.message)}"
    )


def statistics(findings: Sequence[Finding], fmt: str) -> str:
    counts = Counter(finding.code for finding in findings)
    names = {finding.code: finding.name for finding in findings}
    fixable = Counter(finding.code for finding in findings if finding.fix is not None)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if fmt == "json":
        return json.dumps(
            [{"code": code, "name": names[code], "count": count, "fixable": fixable[code]} for code, count in rows],
            indent=2,
        ) + "\n"
    width = max((len(str(count)) for _, count in rows), default=1)
    lines = [f"{count:>{width}}  {code}  {'[*]' if fixable[code] else '   '} {names[code]}" for code, count in rows]
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"
