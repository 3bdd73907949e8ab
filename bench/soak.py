"""No-crash soak: lint every .py file of an installed site-packages (or any tree).

Not a test: it prints files, lines, seconds, internal errors (must be 0), syntax errors (with
their files, to judge by hand: Python 2 files shipped as data are legitimate), and the peak
memory of the main process and of the largest worker.

    python bench/soak.py                 # the running interpreter's site-packages
    python bench/soak.py --tree DIR --jobs 2
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

from devicelint.discovery import discover
from devicelint.rules import all_rules
from devicelint.runner import lint_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    options = parser.parse_args()
    files = discover([str(options.tree)]).files
    lines = 0
    for path in files:
        try:
            with open(path, "rb") as handle:
                lines += handle.read().count(b"\n")
        except OSError:
            pass
    print(f"tree: {options.tree}: {len(files)} .py files, {lines} lines; --jobs {options.jobs}; Python {sys.version.split()[0]}")
    start = time.perf_counter()
    findings = lint_files(files, [rule.code for rule in all_rules()], options.jobs)
    seconds = time.perf_counter() - start
    counts = Counter(finding.code for finding in findings)
    print(f"  {seconds:.1f} s, {lines / seconds:.0f} lines/s, {len(findings)} findings: {dict(sorted(counts.items()))}")
    internal = [finding for finding in findings if finding.code == "DL002"]
    print(f"  internal errors (DL002): {len(internal)}")
    for finding in internal[:20]:
        print(f"    {finding.path}: {finding.message.splitlines()[0]}")
    syntax = [finding for finding in findings if finding.code == "DL001"]
    print(f"  syntax errors (DL001): {len(syntax)}")
    for finding in syntax[:30]:
        print(f"    {finding.path}:{finding.line}: {finding.message.splitlines()[0][:120]}")
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"  peak memory: main process {own:.0f} MB, largest worker {children:.0f} MB")


if __name__ == "__main__":
    main()
