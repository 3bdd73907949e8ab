"""Precision on real code: lint public PyTorch repositories and join the findings with the
hand-written verdicts in bench/wild/verdicts.csv.

Not a test: it prints measurements and exits 0. Usage:

    python bench/wild.py --root /work/scratch/wild                       # this checkout's code
    python bench/wild.py --root /work/scratch/wild --source ../baseline  # another checkout's code
    python bench/wild.py --root DIR --unreviewed todo.csv                # rows to give a verdict
    python bench/wild.py --root DIR --findings all.csv                   # every finding and its verdict

Each repository of bench/wild/repos.csv (``owner/name``) is expected, checked out at its
commit, in ``ROOT/owner__name``; missing ones are skipped. A verdict (true|false|debatable)
is keyed by repo, path (relative to the checkout), line and code. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "wild"
VERDICTS = ("true", "false", "debatable")
FIELDS = ["repo", "path", "line", "code", "verdict", "reason"]


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def count_lines(directory: Path) -> int:
    total = 0
    for parent, _, names in os.walk(directory):
        for name in names:
            if name.endswith(".py"):
                with open(os.path.join(parent, name), "rb") as handle:
                    total += handle.read().count(b"\n")
            elif name.endswith(".ipynb"):
                total += _notebook_code_lines(os.path.join(parent, name))
    return total


def _notebook_code_lines(path: str) -> int:
    """Lines of a notebook's code cells (devicelint lints those); 0 for what does not read."""
    try:
        with open(path, encoding="utf-8") as handle:
            cells = json.load(handle).get("cells", [])
        sources = [cell.get("source", "") for cell in cells if cell.get("cell_type") == "code"]
        return sum(len("".join(source).splitlines()) if isinstance(source, list) else len(source.splitlines()) for source in sources)
    except (OSError, ValueError, AttributeError, TypeError):
        return 0


def lint(directory: Path, args: argparse.Namespace) -> list[dict]:
    """devicelint's JSON findings for one checkout, with paths relative to it."""
    command = [sys.executable, "-m", "devicelint", "--format", "json", "--no-cache", "--jobs", str(args.jobs)]
    for option in ("select", "extend_select"):
        if getattr(args, option):
            command += ["--" + option.replace("_", "-"), getattr(args, option)]
    env = dict(os.environ)
    # the checkout's folder first: `-m devicelint` would otherwise run the interpreter's installed
    # devicelint, which an editable install ties to one checkout, maybe not this one
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(args.source), env.get("PYTHONPATH")]))
    # run from --root: no pyproject.toml there, so no project's [tool.devicelint] applies
    done = subprocess.run([*command, str(directory)], cwd=args.root, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        print(f"warning: devicelint exited {done.returncode} on {directory}: {done.stderr.strip()[-500:]}", file=sys.stderr)
    findings = json.loads(done.stdout or "[]")
    for finding in findings:
        finding["path"] = Path(os.path.relpath(Path(args.root, finding["path"]).resolve(), directory.resolve())).as_posix()
        if finding.get("cell") is not None:  # a notebook: lines count within the cell
            finding["path"] += f":cell {finding['cell']}"
    return findings


def per(count: int, lines: int, scale: int) -> float:
    return count * scale / lines if lines else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, type=Path, help="folder holding the owner__name checkouts")
    parser.add_argument("--source", type=Path, default=ROOT, help="the devicelint checkout whose code to measure (default: this script's)")
    parser.add_argument("--select", help="passed to devicelint --select")
    parser.add_argument("--extend-select", help="passed to devicelint --extend-select")
    parser.add_argument("--jobs", type=int, default=2, help="devicelint worker processes")
    parser.add_argument("--unreviewed", type=Path, help="write the unreviewed findings here as verdicts.csv rows")
    parser.add_argument("--findings", type=Path, help="write every finding, with its verdict, here (CSV)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    args.root = args.root.resolve()
    args.source = args.source.resolve()
    if not (args.source / "devicelint" / "__init__.py").is_file():
        parser.error(f"--source {args.source}: no devicelint package there")

    verdicts = {}
    for row in read_csv(DATA / "verdicts.csv"):
        if row["verdict"] in VERDICTS:
            verdicts[(row["repo"], row["path"], int(row["line"]), row["code"])] = row["verdict"]

    repos, findings = [], []
    for row in read_csv(DATA / "repos.csv"):
        directory = args.root / row["repo"].replace("/", "__")
        if not directory.is_dir():
            print(f"note: {row['repo']} is not under {args.root}: skipped", file=sys.stderr)
            continue
        found = lint(directory, args)
        for finding in found:
            finding["repo"] = row["repo"]
            finding["verdict"] = verdicts.get((row["repo"], finding["path"], finding["line"], finding["code"]), "unreviewed")
        repos.append({"repo": row["repo"], "kind": row["kind"], "lines": count_lines(directory), "findings": len(found)})
        findings += found

    lines = sum(repo["lines"] for repo in repos)
    by_verdict = Counter(f["verdict"] for f in findings)
    seen = {(f["repo"], f["path"], f["line"], f["code"]) for f in findings}
    linted = {repo["repo"] for repo in repos}
    gone = sorted((key, v) for key, v in verdicts.items() if key[0] in linted and key not in seen)
    unreviewed = [f for f in findings if f["verdict"] == "unreviewed"]
    summary = {
        "devicelint": str(args.source),
        "repos": repos,
        "rules": dict(sorted(Counter(f["code"] for f in findings).items())),
        "lines": lines,
        "findings": len(findings),
        "findings_per_10k_lines": round(per(len(findings), lines, 10_000), 3),
        "verdicts": {v: by_verdict.get(v, 0) for v in (*VERDICTS, "unreviewed")},
        "false_per_100k_lines": round(per(by_verdict.get("false", 0), lines, 100_000), 3),
        "verdicts_no_longer_flagged": dict(Counter(v for _, v in gone)),
    }

    if args.json:
        summary["no_longer_flagged"] = [dict(zip(("repo", "path", "line", "code"), key), verdict=v) for key, v in gone]
        summary["unreviewed"] = [{k: f[k] for k in ("repo", "path", "line", "code", "message")} for f in unreviewed]
        print(json.dumps(summary, indent=2))
    else:
        print(f"devicelint measured: {args.source}")
        print(f"{'repo':34} {'kind':9} {'lines':>9} {'findings':>8} {'per 10k':>8}")
        for repo in repos:
            print(f"{repo['repo']:34} {repo['kind']:9} {repo['lines']:9} {repo['findings']:8} {per(repo['findings'], repo['lines'], 10_000):8.2f}")
        print("\nper rule: " + ", ".join(f"{code} {n}" for code, n in summary["rules"].items()))
        by_rule_verdict = Counter((f["code"], f["verdict"]) for f in findings)
        for code in summary["rules"]:
            print(f"  {code}: " + ", ".join(f"{v} {by_rule_verdict[(code, v)]}" for v in (*VERDICTS, "unreviewed") if by_rule_verdict[(code, v)]))
        print(f"\ntotal: {len(findings)} findings in {lines} lines = {summary['findings_per_10k_lines']:.2f} per 10,000 lines")
        print("verdicts: " + ", ".join(f"{v} {n}" for v, n in summary["verdicts"].items()))
        print(f"false alarms: {summary['false_per_100k_lines']:.2f} per 100,000 lines")
        still_false = [f for f in findings if f["verdict"] == "false"]
        if still_false:
            print("false alarms still flagged:")
            for f in still_false:
                print(f"  {f['repo']} {f['path']}:{f['line']} {f['code']}")
        if gone:
            print("reviewed findings no longer flagged: " + ", ".join(f"{v} {n}" for v, n in sorted(summary["verdicts_no_longer_flagged"].items())))
            for (repo, path, line, code), verdict in gone:
                print(f"  {verdict:9} {repo} {path}:{line} {code}")
        if unreviewed:
            print("\nunreviewed:")
            for f in unreviewed:
                print(f"{f['repo']} {f['path']}:{f['line']} {f['code']} {f['message']}")

    if args.findings:
        with open(args.findings, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["repo", "path", "line", "code", "severity", "verdict", "message"])
            for f in findings:
                writer.writerow([f["repo"], f["path"], f["line"], f["code"], f.get("severity", ""), f["verdict"], f["message"]])

    if args.unreviewed:
        with open(args.unreviewed, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(FIELDS)
            for f in unreviewed:  # the message stands in the reason column until a verdict replaces it
                writer.writerow([f["repo"], f["path"], f["line"], f["code"], "", f["message"]])


if __name__ == "__main__":
    main()
