"""Lint throughput, side by side in one run: bare libcst parse, devicelint (all rules; one
process and a process pool) and, optionally, TorchFix on the same files.

Not a test: it prints measurements. Usage:

    python bench/throughput.py                       # the installed torch package's sources
    python bench/throughput.py --tree path/to/repo   # any tree
    python bench/throughput.py --torchfix /path/to/venv/bin/torchfix --sample 120

TorchFix pins an older libcst: give it its own virtualenv (`pip install torchfix==0.7.0`) and
pass its `torchfix` executable. It is slow (~250 lines/s), so it and the other two run on a
deterministic sample of the tree (every k-th file); devicelint and the bare parse also run on
the whole tree.

devicelint pauses Python's cyclic garbage collector while it lints a file (see
devicelint.engine.lint_source); a bare `libcst.parse_module` runs with it on. The budget, all
rules within 2x a bare parse, is against the bare parse as anyone would call it (collector on,
the first row); the second row parses with the collector paused the same way, and each
devicelint row also prints its ratio to that one, so the saving is not credited to the rules.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
from importlib import metadata
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst

from devicelint.discovery import discover
from devicelint.engine import DecodeError, cyclic_gc_paused, decode_source, lint_source, survivors_frozen_between_files
from devicelint.rules import all_rules
from devicelint.project import ProjectIndex
from devicelint.runner import lint_file, lint_files


def torch_tree() -> Path:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed here: pass --tree")
    return Path(list(spec.submodule_search_locations)[0])


def load(files: list[Path]) -> list[tuple[Path, bytes, str]]:
    loaded = []
    for path in files:
        data = path.read_bytes()
        try:
            text = decode_source(data)
        except DecodeError:
            continue
        loaded.append((path, data, text))
    return loaded


def time_parse(loaded, gc_paused: bool = False) -> float:
    """Bare parses; ``gc_paused``: with the collector paused per file, as devicelint does."""
    pause = cyclic_gc_paused if gc_paused else contextlib.nullcontext
    start = time.perf_counter()
    for _, _, text in loaded:
        with pause():
            try:
                libcst.parse_module(text)
            except Exception:  # noqa: BLE001 - a file libcst rejects costs what it cost
                pass
    return time.perf_counter() - start


def time_devicelint(loaded) -> tuple[float, int]:
    """All rules, each file alone, one process, with the collector handled as the CLI's loop
    does (paused per file, survivors frozen between files)."""
    rules = [rule for rule in all_rules()]
    start = time.perf_counter()
    count = 0
    with survivors_frozen_between_files() as after_file:
        for path, data, _ in loaded:
            count += len(lint_source(data, str(path), rules))
            after_file()
    return time.perf_counter() - start, count


def time_devicelint_project(files: list[Path]) -> tuple[float, int, int]:
    """All rules, each file's analysis reading the project modules it imports (the CLI's
    default), one process: (seconds, findings, project files read in all)."""
    codes = [rule.code for rule in all_rules()]
    project = ProjectIndex(batch=files)  # as the runner makes it for a chunk
    start = time.perf_counter()
    count = reads = 0
    with survivors_frozen_between_files() as after_file:
        for path in files:
            findings, _, read = lint_file(path, codes, project=project)
            count += len(findings)
            reads += len(read)
            after_file()
    return time.perf_counter() - start, count, reads


def time_devicelint_pool(files: list[Path], jobs: int) -> float:
    codes = [rule.code for rule in all_rules()]
    start = time.perf_counter()
    lint_files(files, codes, jobs)
    return time.perf_counter() - start


def time_torchfix(executable: str, files: list[Path]) -> float:
    with tempfile.TemporaryDirectory() as scratch:
        empty = Path(scratch) / "empty.py"
        empty.write_text("import torch\n")
        start = time.perf_counter()
        subprocess.run([executable, "-j", "1", str(empty)], capture_output=True)
        startup = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run([executable, "-j", "1", *map(str, files)], capture_output=True)
    return time.perf_counter() - start - startup


def row(name: str, seconds: float, files: int, lines: int, baseline: float, paused_baseline: float = 0.0) -> str:
    text = f"  {name:<38} {seconds:8.2f} s {files / seconds:9.1f} files/s {lines / seconds:10.0f} lines/s {seconds / baseline:7.2f}x parse"
    if paused_baseline:
        text += f" ({seconds / paused_baseline:.2f}x parse with GC paused)"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=None, help="directory of Python sources (default: the installed torch package)")
    parser.add_argument("--torchfix", default=None, help="path of a torchfix executable (own virtualenv)")
    parser.add_argument("--sample", type=int, default=120, help="files in the side-by-side sample")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sample-only", action="store_true", help="skip the whole-tree measurements")
    options = parser.parse_args()

    tree = options.tree or torch_tree()
    files = discover([str(tree)]).files
    if not files:
        sys.exit(f"no Python files under {tree}: pass --tree a directory of Python sources")
    print(f"tree: {tree} ({len(files)} Python files), {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, libcst {metadata.version('libcst')}")

    step = max(1, len(files) // options.sample)
    sample_files = files[::step][: options.sample]
    sample = load(sample_files)
    sample_lines = sum(text.count("\n") for _, _, text in sample)
    print(f"\nsample: every {step}th file, {len(sample)} files, {sample_lines} lines (same files for every tool)")
    parse = time_parse(sample)
    parse_paused = time_parse(sample, gc_paused=True)
    lint, found = time_devicelint(sample)
    project_lint, project_found, reads = time_devicelint_project([path for path, _, _ in sample])
    print(row("bare libcst.parse_module", parse, len(sample), sample_lines, parse))
    print(row("bare parse, GC paused per file", parse_paused, len(sample), sample_lines, parse))
    print(row("devicelint, all rules, 1 process, 1 file", lint, len(sample), sample_lines, parse, parse_paused) + f"   ({found} findings)")
    print(
        row("  ... reading imported project modules", project_lint, len(sample), sample_lines, parse, parse_paused)
        + f"   ({project_found} findings, {reads} module reads)"
    )
    if options.torchfix:
        torchfix = time_torchfix(options.torchfix, [path for path, _, _ in sample])
        print(row("TorchFix 0.7, -j 1", torchfix, len(sample), sample_lines, parse))
        print(f"  devicelint is {torchfix / lint:.1f}x faster than TorchFix on the same files")

    if options.sample_only:
        return
    everything = load(files)
    lines = sum(text.count("\n") for _, _, text in everything)
    torch_only = [item for item in everything if "torch" in item[2]]
    torch_lines = sum(text.count("\n") for _, _, text in torch_only)
    print(f"\nwhole tree: {len(everything)} files, {lines} lines; {len(torch_only)} files ({torch_lines} lines) mention torch")
    parse_all = time_parse(everything)
    parse_torch = time_parse(torch_only)
    parse_torch_paused = time_parse(torch_only, gc_paused=True)
    lint_all, found_all = time_devicelint(everything)
    # the CLI's default on a whole tree in one process: one batch, so a module imported by
    # several files is parsed once and a linted file's own tree serves its importers
    default_all = time_devicelint_pool([path for path, _, _ in everything], 1)
    pool = time_devicelint_pool([path for path, _, _ in everything], options.jobs)
    print(row("bare libcst.parse_module, all files", parse_all, len(everything), lines, parse_all))
    print(row("bare parse, torch-mentioning files", parse_torch, len(torch_only), torch_lines, parse_torch))
    print(row("devicelint, 1 process", lint_all, len(everything), lines, parse_all) + f"   ({found_all} findings)")
    print(
        f"  devicelint / parse of the same (torch-mentioning) files: {lint_all / parse_torch:.2f}x "
        f"({lint_all / parse_torch_paused:.2f}x parse with GC paused)"
    )
    print(row("devicelint default (reads imports), --jobs 1", default_all, len(everything), lines, parse_all))
    print(
        f"  devicelint default / parse of the same (torch-mentioning) files: {default_all / parse_torch:.2f}x "
        f"({default_all / parse_torch_paused:.2f}x parse with GC paused)"
    )
    print(row(f"devicelint, --jobs {options.jobs}", pool, len(everything), lines, parse_all))


if __name__ == "__main__":
    main()
