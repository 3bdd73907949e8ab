"""SARIF 2.1.0: the tool's rules (with their docs as help) and results with regions and fixes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

from devicelint import __version__
from devicelint.findings import Finding, Severity
from devicelint.rules import all_rules

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(path: str) -> str:
    return Path(path).as_posix()


def _region(line: int, column: int, end_line: Optional[int] = None, end_column: Optional[int] = None, cell: Optional[int] = None) -> dict[str, Any]:
    """A region; in a notebook its lines count within code cell ``cell`` (a region property:
    SARIF has no notion of cells)."""
    region: dict[str, Any] = {"startLine": line, "startColumn": column}
    if end_line is not None and end_column is not None:
        region.update(endLine=end_line, endColumn=end_column)
    if cell is not None:
        region["properties"] = {"cell": cell}
    return region


def render_sarif(findings: Sequence[Finding]) -> str:
    rules = list(all_rules())
    index = {rule.code: position for position, rule in enumerate(rules)}
    descriptors = []
    for rule in rules:
        docs = rule.docs()
        full = docs.get("What it does", rule.summary)
        descriptors.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": full},
                "help": {"text": rule.render_docs(), "markdown": rule.render_docs()},
                "defaultConfiguration": {"level": _LEVEL[rule.severity], "enabled": rule.default_enabled},
                "properties": {"fix": rule.fix_safety or "none"},
            }
        )
    results: list[dict[str, Any]] = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.code,
            "level": _LEVEL[finding.severity],
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(finding.path)},
                        "region": _region(finding.line, finding.column, finding.end_line, finding.end_column, finding.cell),
                    }
                }
            ],
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        if finding.related:
            result["relatedLocations"] = [
                {
                    "id": position,
                    "message": {"text": related.message},
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(related.path or finding.path)},
                        "region": _region(related.line, related.column, cell=related.cell),
                    },
                }
                for position, related in enumerate(finding.related)
            ]
        if finding.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": finding.fix.title},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(finding.path)},
                            "replacements": [
                                {
                                    "deletedRegion": _region(edit.line, edit.column, edit.end_line, edit.end_column, edit.cell),
                                    "insertedContent": {"text": edit.content},
                                }
                                for edit in finding.fix.edits
                            ],
                        }
                    ],
                    "properties": {"applicability": "safe" if finding.fix.safe else "unsafe"},
                }
            ]
        results.append(result)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "devicelint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": descriptors,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2) + "\n"
