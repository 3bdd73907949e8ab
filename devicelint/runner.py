"""Lint many files, in a process pool when asked, never letting one file stop the run."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Iterable, Optional, Sequence

from devicelint.cache import ResultCache
from devicelint.engine import lint_source
from devicelint.findings import Finding
from devicelint.notebook import is_notebook, lint_notebook_data
from devicelint.rules import Rule, rules_by_code

_CHUNK = 16

#: (path, its findings, whether they may be cached)
FileResult = tuple[str, list[Finding], bool]


def lint_file(path: Path, codes: Sequence[str], verbose: bool = False) -> tuple[list[Finding], bool]:
    registry = rules_by_code()
    display = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        rule = registry["DL001"]
        reason = error.strerror or str(error)
        return [Finding(rule.code, rule.name, rule.severity, f"cannot read file: {reason}", display, 1, 1, 1, 1)], False
    return lint_data(data, display, [registry[code] for code in codes], verbose), True


def lint_data(data: bytes, display: str, rules: Sequence[type[Rule]], verbose: bool = False) -> list[Finding]:
    """A file's findings from its bytes, read as a notebook when ``display`` ends in .ipynb,
    else as Python source."""
    if is_notebook(display):
        return lint_notebook_data(data, display, rules, verbose=verbose)
    return lint_source(data, display, rules, verbose=verbose)


def _lint_chunk(paths: list[str], codes: Sequence[str], verbose: bool) -> list[FileResult]:
    results = []
    for path in paths:
        findings, cacheable = lint_file(Path(path), codes, verbose)
        results.append((path, findings, cacheable))
    return results


def lint_files(
    paths: Iterable[Path],
    codes: Sequence[str],
    jobs: int = 1,
    verbose: bool = False,
    cache: Optional[ResultCache] = None,
) -> list[Finding]:
    files = [str(path) for path in paths]
    findings: list[Finding] = []
    keys: dict[str, str] = {}
    if cache is not None:
        misses = []
        for path in files:
            try:
                data = Path(path).read_bytes()
            except OSError:
                misses.append(path)
                continue
            key = cache.key(data, notebook=is_notebook(path))
            cached = cache.get(key, path)
            if cached is None:
                keys[path] = key
                misses.append(path)
            else:
                findings.extend(cached)
        files = misses
    for path, file_findings, cacheable in _run(files, codes, jobs, verbose):
        findings.extend(file_findings)
        if cache is not None and cacheable and path in keys and not any(f.code == "DL002" for f in file_findings):
            cache.put(keys[path], file_findings)
    return findings


def _run(files: list[str], codes: Sequence[str], jobs: int, verbose: bool) -> list[FileResult]:
    if jobs <= 1 or len(files) <= _CHUNK:
        return _lint_chunk(files, codes, verbose)
    chunks = [files[index:index + _CHUNK] for index in range(0, len(files), _CHUNK)]
    results: list[FileResult] = []
    failed: list[list[str]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(chunk, pool.submit(_lint_chunk, chunk, codes, verbose)) for chunk in chunks]
        for chunk, future in futures:
            try:
                results.extend(future.result())
            except BrokenProcessPool:
                failed.append(chunk)
    for chunk in failed:
        results.extend(_retry_alone(chunk, codes, verbose))
    return results


def _retry_alone(chunk: list[str], codes: Sequence[str], verbose: bool) -> list[FileResult]:
    """A worker died (killed by the OS, say): lint each file of its chunk in a process of its
    own, so the file that kills a worker is reported and the others keep their findings."""
    rule = rules_by_code()["DL002"]
    results: list[FileResult] = []
    for path in chunk:
        try:
            with ProcessPoolExecutor(max_workers=1) as pool:
                results.extend(pool.submit(_lint_chunk, [path], codes, verbose).result())
        except BrokenProcessPool:
            message = "the worker process linting this file died (killed, or out of memory)"
            results.append((path, [Finding(rule.code, rule.name, rule.severity, message, path, 1, 1, 1, 1)], False))
    return results


def default_jobs() -> int:
    return os.cpu_count() or 1
