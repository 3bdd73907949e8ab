"""Which files to lint: recurse directories, skip the usual non-source folders and whatever
.gitignore files say, apply --exclude; a file named explicitly is always linted."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import pathspec

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "build", "dist", "node_modules",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".devicelint_cache", ".eggs",
    }
)
SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: directories given on the command line that held no Python file
    empty: list[str] = field(default_factory=list)


def _is_virtualenv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file()


def _excluded(path: Path, patterns: Iterable[str], root: Path) -> bool:
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = path.as_posix()
    for pattern in patterns:
        if fnmatch.fnmatch(path.name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(
            relative, pattern.rstrip("/") + "/*"
        ):
            return True
    return False


def _gitignore(directory: Path) -> Optional[pathspec.PathSpec]:
    ignore_file = directory / ".gitignore"
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def discover(paths: Iterable[str], exclude: Iterable[str] = (), root: Optional[Path] = None) -> Discovery:
    result = Discovery()
    exclude = list(exclude)
    root = root or Path.cwd()
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            result.missing.append(raw)
            continue
        if path.is_dir():
            before = len(result.files)
            _walk(path, exclude, root, result.files, seen)
            if len(result.files) == before:
                result.empty.append(raw)
        else:
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                result.files.append(path)
    return result


def _walk(top: Path, exclude: list[str], root: Path, out: list[Path], seen: set[Path]) -> None:
    visited: set[str] = set()
    specs: list[tuple[Path, pathspec.PathSpec]] = []
    git_root = _git_root(top)
    if git_root is not None:
        # .gitignore files between the repository root and ``top`` apply too
        chain = [git_root, *[p for p in reversed(top.resolve().parents) if git_root in p.parents]]
        for directory in chain:
            spec = _gitignore(directory)
            if spec is not None:
                specs.append((directory, spec))
        # a directory named on the command line is linted even if an enclosing .gitignore
        # ignores it (say, site-packages inside an ignored .venv); its own .gitignore still applies
        ignored_path = [top.resolve(), *top.resolve().parents]
        if any(_ignored(p, True, specs) for p in ignored_path if git_root in p.parents):
            specs = []
    _walk_directory(top, exclude, root, out, seen, visited, specs)


def _git_root(directory: Path) -> Optional[Path]:
    for candidate in (directory.resolve(), *directory.resolve().parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _ignored(path: Path, is_dir: bool, specs: list[tuple[Path, pathspec.PathSpec]]) -> bool:
    resolved = path.resolve() if path.is_symlink() else path.absolute()
    for base, spec in specs:
        try:
            relative = resolved.relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
        if spec.match_file(relative + ("/" if is_dir else "")):
            return True
    return False


def _walk_directory(
    directory: Path,
    exclude: list[str],
    root: Path,
    out: list[Path],
    seen: set[Path],
    visited: set[str],
    specs: list[tuple[Path, pathspec.PathSpec]],
) -> None:
    real = os.path.realpath(directory)
    if real in visited:
        return  # a symlink loop, or a second way into the same directory
    visited.add(real)
    local = _gitignore(directory)
    if local is not None:
        specs = [*specs, (directory.absolute(), local)]
    try:
        entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir:
            if entry.name in SKIPPED_DIRECTORIES or _is_virtualenv(path):
                continue
            if _excluded(path, exclude, root) or _ignored(path, True, specs):
                continue
            _walk_directory(path, exclude, root, out, seen, visited, specs)
        elif entry.name.endswith(SUFFIXES):
            if _excluded(path, exclude, root) or _ignored(path, False, specs):
                continue
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                out.append(path)
