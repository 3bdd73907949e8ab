"""Lint many files, in a process pool when asked, never letting one file stop the run."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Iterable, Optional, Sequence

from devicelint.cache import ResultCache
from devicelint.engine import lint_source, survivors_frozen_between_files
from devicelint.findings import Finding
from devicelint.notebook import is_notebook, lint_notebook_data
from devicelint.project import ProjectIndex, ProjectView
from devicelint.rules import Rule, rules_by_code

#: the fewest files a worker process is handed at once
_CHUNK = 16
#: chunks per worker: enough to even out the load, few enough that each chunk's project index
#: (rebuilt per chunk) is reused by many files - an imported module is parsed once per chunk
_CHUNKS_PER_WORKER = 4

#: (path, its findings, whether they may be cached, the project files its analysis read)
FileResult = tuple[str, list[Finding], bool, list[str]]


def lint_file(
    path: Path, codes: Sequence[str], verbose: bool = False, project: Optional[ProjectIndex] = None
) -> tuple[list[Finding], bool, list[str]]:
    """A file's findings, whether they may be cached, and the other files of its project that
    its analysis read (with ``project``; see devicelint.project)."""
    registry = rules_by_code()
    display = str(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        rule = registry["DL001"]
        reason = error.strerror or str(error)
        return [Finding(rule.code, rule.name, rule.severity, f"cannot read file: {reason}", display, 1, 1, 1, 1)], False, []
    view = project.view(display) if project is not None else None
    findings = lint_data(data, display, [registry[code] for code in codes], verbose, view)
    return findings, True, [str(read) for read in view.reads] if view is not None else []


def lint_data(
    data: bytes, display: str, rules: Sequence[type[Rule]], verbose: bool = False, project: Optional[ProjectView] = None
) -> list[Finding]:
    """A file's findings from its bytes, read as a notebook when ``display`` ends in .ipynb,
    else as Python source."""
    if is_notebook(display):
        return lint_notebook_data(data, display, rules, verbose=verbose, project=project)
    return lint_source(data, display, rules, verbose=verbose, project=project)


def _lint_chunk(paths: list[str], codes: Sequence[str], verbose: bool, project_root: Optional[str] = None, cross_file: bool = True) -> list[FileResult]:
    # one index per chunk: a chunk holds neighbouring files, which import the same modules
    project = ProjectIndex(Path(project_root) if project_root else None, batch=map(Path, paths)) if cross_file else None
    results = []
    with survivors_frozen_between_files() as after_file:
        for path in paths:
            findings, cacheable, reads = lint_file(Path(path), codes, verbose, project)
            results.append((path, findings, cacheable, reads))
            after_file()
    return results


def lint_files(
    paths: Iterable[Path],
    codes: Sequence[str],
    jobs: int = 1,
    verbose: bool = False,
    cache: Optional[ResultCache] = None,
    project_root: Optional[Path] = None,
    cross_file: bool = True,
) -> list[Finding]:
    """Lint ``paths``; each file's analysis reads the modules of its project that it imports
    (``cross_file``), its project root found from its folder or else ``project_root``."""
    files = [str(path) for path in paths]
    findings: list[Finding] = []
    keys: dict[str, str] = {}
    digests: dict[str, str] = {}
    if cache is not None:
        misses = []
        for path in files:
            try:
                data = Path(path).read_bytes()
            except OSError:
                misses.append(path)
                continue
            key = cache.key(data, notebook=is_notebook(path))
            keys[path] = key
            reads = cache.get_reads(key)
            cached = cache.get(cache.with_reads(key, reads, digests), path) if reads is not None else None
            if cached is None:
                misses.append(path)
            else:
                findings.extend(cached)
        files = misses
    root = str(project_root) if project_root is not None else None
    for path, file_findings, cacheable, reads in _run(files, codes, jobs, verbose, root, cross_file):
        findings.extend(file_findings)
        if cache is not None and cacheable and path in keys and not any(f.code == "DL002" for f in file_findings):
            cache.put(cache.with_reads(keys[path], reads, digests), file_findings)
            cache.put_reads(keys[path], reads)
    return findings


def _run(files: list[str], codes: Sequence[str], jobs: int, verbose: bool, root: Optional[str], cross_file: bool) -> list[FileResult]:
    if jobs <= 1 or len(files) <= _CHUNK:
        return _lint_chunk(files, codes, verbose, root, cross_file)
    size = max(_CHUNK, -(-len(files) // (jobs * _CHUNKS_PER_WORKER)))
    chunks = [files[index:index + size] for index in range(0, len(files), size)]
    results: list[FileResult] = []
    failed: list[list[str]] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(chunk, pool.submit(_lint_chunk, chunk, codes, verbose, root, cross_file)) for chunk in chunks]
        for chunk, future in futures:
            try:
                results.extend(future.result())
            except BrokenProcessPool:
                failed.append(chunk)
    for chunk in failed:
        results.extend(_retry_alone(chunk, codes, verbose, root, cross_file))
    return results


def _retry_alone(chunk: list[str], codes: Sequence[str], verbose: bool, root: Optional[str], cross_file: bool) -> list[FileResult]:
    """A worker died (killed by the OS, say): lint each file of its chunk in a process of its
    own, so the file that kills a worker is reported and the others keep their findings."""
    rule = rules_by_code()["DL002"]
    results: list[FileResult] = []
    for path in chunk:
        try:
            with ProcessPoolExecutor(max_workers=1) as pool:
                results.extend(pool.submit(_lint_chunk, [path], codes, verbose, root, cross_file).result())
        except BrokenProcessPool:
            message = "the worker process linting this file died (killed, or out of memory)"
            results.append((path, [Finding(rule.code, rule.name, rule.severity, message, path, 1, 1, 1, 1)], False, []))
    return results


def default_jobs() -> int:
    return os.cpu_count() or 1
