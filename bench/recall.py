"""Recall on the corpus of real, reported device bugs (bench/realbugs/).

Not a gate: it prints a measurement and always exits 0. Each corpus file reproduces one public bug
report and marks the line(s) the upstream fix changed with ``# expect: DLnnn``; a marker is
*caught* when devicelint reports that code on that line. ``bench/realbugs/fixed/`` holds the fixed
twins of some bugs: code whose bug the upstream fix removed. A finding there is a false alarm unless
bench/realbugs/fixed/verdicts.csv, reviewed by hand, says it is true of the fixed code (an upstream
fix that moves with `torch.zeros(n).to(device)` still allocates on the CPU: DL402 is right there).

    python bench/recall.py                       # the default rule selection, as the CLI runs it
    python bench/recall.py --missed              # also list every missed marker with its line
    python bench/recall.py --json                # the same figures as one JSON object
    python bench/recall.py --select DL2 --extend-select DL302

It lints in-process with the devicelint of the checkout this script is in, whatever devicelint the
interpreter has installed; ``--source /that/checkout`` measures another checkout's code on this
corpus. The report's first line names the code it measured.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent


def _checkout_to_measure(argv: Sequence[str]) -> Path:
    """``--source``'s folder, else this script's checkout. Read before devicelint is imported: run as
    ``python bench/recall.py`` the script's own folder, not the checkout, heads ``sys.path``, so Python
    would import its installed devicelint (an editable install points at one checkout) and a worktree
    would measure another worktree's code."""
    for index, argument in enumerate(argv):
        if argument == "--source" and index + 1 < len(argv):
            return Path(argv[index + 1]).resolve()
        if argument.startswith("--source="):
            return Path(argument.split("=", 1)[1]).resolve()
    return ROOT


if __name__ == "__main__":
    sys.path.insert(0, str(_checkout_to_measure(sys.argv[1:])))

import devicelint  # noqa: E402 - after the checkout to measure is put first
from devicelint.engine import lint_source  # noqa: E402
from devicelint.findings import Finding  # noqa: E402
from devicelint.rules.base import expected_findings  # noqa: E402
from devicelint.selection import resolve, validate_selectors  # noqa: E402

CORPUS = ROOT / "bench" / "realbugs"
SEVERITIES = ("error", "warning", "info")
TWIN_VERDICTS = CORPUS / "fixed" / "verdicts.csv"
#: what each collection batch (the hundreds digit of a bug file's number) is, where it is more than
#: a batch: the held-out one was collected after the linter was tuned and is never tuned on
BATCHES = CORPUS / "batches.json"


@dataclass(frozen=True)
class Marker:
    path: str
    line: int
    code: str
    caught: bool
    source: str


@dataclass(frozen=True)
class Reported:
    """A finding, flattened to what the report prints (and JSON can hold)."""

    path: str
    line: int
    code: str
    severity: str
    message: str
    #: on a fixed twin: the hand verdict (true|false|debatable), "unreviewed" where there is none
    verdict: str = ""

    @classmethod
    def of(cls, finding: Finding, verdict: str = "") -> "Reported":
        return cls(finding.path, finding.line, finding.code, finding.severity.value, finding.message, verdict)


@dataclass(frozen=True)
class RuleRecall:
    code: str
    markers: int
    caught: int

    @property
    def percent(self) -> float:
        return 100.0 * self.caught / self.markers if self.markers else 0.0


@dataclass
class Report:
    rules: list[str]
    markers: list[Marker] = field(default_factory=list)
    bug_files: int = 0
    #: bug files whose every marker is caught
    files_all_caught: int = 0
    #: bug files with an error/warning finding anywhere (any line, any code), per batch: a
    #: looser figure than the markers' - the linter raised an alarm on the buggy program -
    #: to be read beside the findings on the fixed twins, which the same looseness would count
    flagged_by_batch: Counter = field(default_factory=Counter)
    bugs_by_batch: Counter = field(default_factory=Counter)
    twin_files: int = 0
    #: every finding on a fixed twin: a false alarm on correct code
    twin_findings: list[Reported] = field(default_factory=list)
    #: findings on bug files that catch no marker (other code, or a line without a marker);
    #: not necessarily wrong, a reproduction may hold a second real problem
    unmatched_findings: list[Reported] = field(default_factory=list)

    @property
    def caught(self) -> int:
        return sum(marker.caught for marker in self.markers)

    @property
    def percent(self) -> float:
        return 100.0 * self.caught / len(self.markers) if self.markers else 0.0

    def per_rule(self) -> list[RuleRecall]:
        totals = Counter(marker.code for marker in self.markers)
        caught = Counter(marker.code for marker in self.markers if marker.caught)
        return [RuleRecall(code, totals[code], caught[code]) for code in sorted(totals)]

    def twin_severities(self) -> dict[str, int]:
        counts = Counter(finding.severity for finding in self.twin_findings)
        return {severity: counts[severity] for severity in SEVERITIES}

    @property
    def twin_error_warning(self) -> int:
        counts = self.twin_severities()
        return counts["error"] + counts["warning"]

    @property
    def twin_error_warning_not_true(self) -> int:
        """Error/warning findings on the twins not reviewed as true of the fixed code."""
        return sum(f.severity in ("error", "warning") and f.verdict != "true" for f in self.twin_findings)

    def twin_verdicts(self) -> dict[str, int]:
        counts = Counter(f.verdict for f in self.twin_findings if f.severity in ("error", "warning"))
        return {verdict: counts[verdict] for verdict in ("true", "debatable", "false", "unreviewed")}

    def per_batch(self) -> list[tuple[str, int, int]]:
        """(batch, markers, caught) per collection batch: files numbered 4xx are batch "4xx"."""
        totals: Counter = Counter()
        caught: Counter = Counter()
        for marker in self.markers:
            batch = _batch_of(marker.path)
            totals[batch] += 1
            caught[batch] += marker.caught
        return [(batch, totals[batch], caught[batch]) for batch in sorted(totals, key=_batch_order)]

    def missed(self) -> list[Marker]:
        return [marker for marker in self.markers if not marker.caught]

    def to_dict(self) -> dict:
        return {
            "rules": self.rules,
            "markers": len(self.markers),
            "caught": self.caught,
            "percent": round(self.percent, 1),
            "per_rule": [{**asdict(rule), "percent": round(rule.percent, 1)} for rule in self.per_rule()],
            "per_batch": [{"batch": batch, "markers": n, "caught": c} for batch, n, c in self.per_batch()],
            "bug_files": self.bug_files,
            "files_all_caught": self.files_all_caught,
            "files_flagged": sum(self.flagged_by_batch.values()),
            "twin_files": self.twin_files,
            "twin_severities": self.twin_severities(),
            "twin_error_warning_verdicts": self.twin_verdicts(),
            "twin_findings": [asdict(finding) for finding in self.twin_findings],
            "unmatched_findings": [asdict(finding) for finding in self.unmatched_findings],
            "missed": [asdict(marker) for marker in self.missed()],
        }


def selected_rules(select: Optional[Sequence[str]] = None, extend_select: Sequence[str] = ()) -> list:
    """The rules the CLI would run for these options: ``select`` replaces the default set,
    ``extend_select`` adds to it. The project's pyproject configuration is deliberately not read,
    so that the figure depends on the linter and the corpus only, not on the working directory."""
    chosen = validate_selectors(select, "--select") if select is not None else None
    return resolve(None, (), (), chosen, validate_selectors(extend_select, "--extend-select"), ()).rules()


def _batch_of(path: str) -> str:
    """``bench/realbugs/401_x.py`` -> "4xx", ``1003_x.py`` -> "10xx"; a name without a leading number -> "other"."""
    name = Path(path).name
    digits = len(name) - len(name.lstrip("0123456789"))
    if digits < 3:
        return "other"
    return f"{int(name[:digits]) // 100}xx"  # 1003_x.py -> "10xx"


def _batch_order(batch: str) -> tuple[int, str]:
    """Batches in collection order: "9xx" before "10xx", "other" last."""
    number = batch[:-2]
    return (int(number), batch) if number.isdigit() else (1 << 30, batch)


def batch_labels(path: Path = BATCHES) -> dict[str, str]:
    """Batch -> what it is (absent file: no labels)."""
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8") as handle:
        return {str(key): str(value) for key, value in json.load(handle).items()}


def _display(path: Path) -> str:
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def _lint(path: Path, rules: list) -> tuple[str, list[Finding]]:
    data = path.read_bytes()
    # bytes, as the CLI passes them, so that decoding follows the same path
    return data.decode("utf-8", "replace"), lint_source(data, _display(path), rules)


def twin_verdicts(path: Path = TWIN_VERDICTS) -> dict[tuple[str, int, str], str]:
    """(twin file name, line, code) -> verdict, from the hand-review file (absent: none)."""
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as handle:
        return {(row["file"], int(row["line"]), row["code"]): row["verdict"] for row in csv.DictReader(handle)}


def measure(select: Optional[Sequence[str]] = None, extend_select: Sequence[str] = (), corpus: Path = CORPUS) -> Report:
    rules = selected_rules(select, extend_select)
    verdicts = twin_verdicts(corpus / "fixed" / "verdicts.csv")
    report = Report(rules=[rule.code for rule in rules])
    for path in sorted(corpus.glob("*.py")):
        text, findings = _lint(path, rules)
        lines = text.splitlines()
        found = {(finding.line, finding.code) for finding in findings}
        expected = expected_findings(text)
        marked = set(expected)
        report.bug_files += 1
        file_markers = [
            Marker(_display(path), line, code, (line, code) in found, lines[line - 1].strip()) for line, code in expected
        ]
        report.markers.extend(file_markers)
        if file_markers and all(marker.caught for marker in file_markers):
            report.files_all_caught += 1
        batch = _batch_of(_display(path))
        report.bugs_by_batch[batch] += 1
        report.flagged_by_batch[batch] += any(finding.severity.value in ("error", "warning") for finding in findings)
        report.unmatched_findings.extend(Reported.of(f) for f in findings if (f.line, f.code) not in marked)
    for path in sorted((corpus / "fixed").glob("*.py")):
        _, findings = _lint(path, rules)
        report.twin_files += 1
        report.twin_findings.extend(
            Reported.of(finding, verdicts.get((path.name, finding.line, finding.code), "unreviewed")) for finding in findings
        )
    return report


def _print(report: Report, show_missed: bool, labels: Optional[dict[str, str]] = None) -> None:
    print(f"{'rule':<7} {'markers':>7} {'caught':>7} {'recall':>7}")
    for rule in report.per_rule():
        # a marker may name a planned code no rule implements yet; it counts, and shows as such
        note = "" if rule.code in report.rules else "  (not selected / not implemented)"
        print(f"{rule.code:<7} {rule.markers:>7} {rule.caught:>7} {rule.percent:>6.1f}%{note}")
    print(f"{'all':<7} {len(report.markers):>7} {report.caught:>7} {report.percent:>6.1f}%")
    print(f"bugs with every marker caught: {report.files_all_caught} of {report.bug_files}")
    print(
        f"bugs with an error/warning finding anywhere in the file (any line, any code; compare the twins' "
        f"findings below): {sum(report.flagged_by_batch.values())} of {report.bug_files}"
    )
    for batch, markers, caught in report.per_batch():
        label = (labels or {}).get(batch)
        percent = 100.0 * caught / markers if markers else 0.0
        flagged = f"; {report.flagged_by_batch[batch]} of {report.bugs_by_batch[batch]} bugs flagged anywhere"
        print(f"  batch {batch}: {caught} of {markers} markers ({percent:.1f}%{flagged})" + (f"  - {label}" if label else ""))
    severities = report.twin_severities()
    flagged_twins = len({f.path for f in report.twin_findings if f.severity in ("error", "warning")})
    print(
        f"\nfindings on {report.twin_files} fixed twins: {len(report.twin_findings)} "
        f"(error {severities['error']}, warning {severities['warning']}, info {severities['info']}); "
        f"twins with an error/warning finding anywhere: {flagged_twins}"
    )
    verdicts = report.twin_verdicts()
    print(
        "error/warning on twins by hand verdict: " + ", ".join(f"{verdict} {n}" for verdict, n in verdicts.items())
        + f" -> not known true: {report.twin_error_warning_not_true}"
    )
    for finding in report.twin_findings:
        print(f"  {finding.path}:{finding.line} {finding.code} [{finding.severity}] ({finding.verdict}) {finding.message}")
    print(f"\nfindings on bug files that match no marker: {len(report.unmatched_findings)}")
    for finding in report.unmatched_findings:
        print(f"  {finding.path}:{finding.line} {finding.code} [{finding.severity}] {finding.message}")
    if show_missed:
        missed = report.missed()
        print(f"\nmissed markers: {len(missed)}")
        for marker in missed:
            print(f"  {marker.path}:{marker.line} {marker.code}  {marker.source}")


def _split(values: Optional[list[str]]) -> Optional[list[str]]:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", action="append", metavar="CODES", help="replace the default rule set (as the CLI's --select)")
    parser.add_argument("--extend-select", action="append", metavar="CODES", help="add rules to the set (as the CLI's --extend-select)")
    parser.add_argument("--missed", action="store_true", help="list every missed marker with its source line")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"the corpus directory (default: {_display(CORPUS)})")
    parser.add_argument("--source", type=Path, help="the devicelint checkout whose code to measure (default: this script's)")
    args = parser.parse_args(argv)
    measured = measured_checkout()
    if args.source and measured != args.source.resolve():
        # main() called in a process that imported devicelint already: the code cannot be switched
        print(f"recall: devicelint was imported from {measured}, not from --source {args.source} (already imported, or no devicelint there)", file=sys.stderr)
        return 2
    try:
        report = measure(_split(args.select), _split(args.extend_select) or (), args.corpus)
    except ValueError as error:  # an unknown selector: say so, but a measurement never fails a build
        print(f"recall: {error}", file=sys.stderr)
        return 0
    if args.json:
        print(json.dumps({"devicelint": str(measured), **report.to_dict()}, indent=2))
    else:
        print(f"devicelint measured: {measured}")
        _print(report, args.missed, batch_labels(args.corpus / "batches.json"))
    return 0


def measured_checkout() -> Path:
    """The checkout whose devicelint this process imported."""
    return Path(devicelint.__file__).resolve().parent.parent


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into `head`: the reader has what it wanted
        sys.exit(0)
