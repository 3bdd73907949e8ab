"""Lint many files, in a process pool when asked, never letting one file stop the run."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Iterable, Sequence

from devicelint.engine import lint_source
from devicelint.findings import Finding
from devicelint.rules import rules_by_code

_CHUNK = 16


def lint_file(path: Path, codes: Sequence[str], verbose: bool = False) -> list[Finding]:
    registry = rules_by_code()
    display = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        rule = registry["DL001"]
        reason = error.strerror or str(error)
        return [Finding(rule.code, rule.name, rule.severity, f"cannot read file: {reason}", display, 1, 1, 1, 1)]
    return lint_source(data, display, [registry[code] for code in codes], verbose=verbose)


def _lint_chunk(paths: list[str], codes: Sequence[str], verbose: bool) -> list[Finding]:
    findings: list[Finding] = []
    for path in paths:
        findings.extend(lint_file(Path(path), codes, verbose))
    return findings


def lint_files(paths: Iterable[Path], codes: Sequence[str], jobs: int = 1, verbose: bool = False) -> list[Finding]:
    files = [str(path) for path in paths]
    if jobs <= 1 or len(files) <= _CHUNK:
        return _lint_chunk(files, codes, verbose)
    chunks = [files[index:index + _CHUNK] for index in range(0, len(files), _CHUNK)]
    findings: list[Finding] = []
    failed: list[list[str]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(chunk, pool.submit(_lint_chunk, chunk, codes, verbose)) for chunk in chunks]
        for chunk, future in futures:
            try:
                findings.extend(future.result())
            except BrokenProcessPool:
                failed.append(chunk)
    for chunk in failed:
        findings.extend(_retry_alone(chunk, codes, verbose))
    return findings


def _retry_alone(chunk: list[str], codes: Sequence[str], verbose: bool) -> list[Finding]:
    """A worker died (killed by the OS, say): lint each file of its chunk in its own process,
    so the one that kills a worker is reported and the others keep their findings."""
    registry = rules_by_code()
    rule = registry["DL002"]
    findings: list[Finding] = []
    for path in chunk:
        try:
            with ProcessPoolExecutor(max_workers=1) as pool:
                findings.extend(pool.submit(_lint_chunk, [path], codes, verbose).result())
        except BrokenProcessPool:
            findings.append(
                Finding(rule.code, rule.name, rule.severity, "the worker process linting this file died", path, 1, 1, 1, 1)
            )
    return findings


def default_jobs() -> int:
    return os.cpu_count() or 1
