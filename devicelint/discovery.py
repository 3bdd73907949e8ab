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


def _is_virtualenv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


def _relative(path: str, base: str) -> Optional[str]:
    """``path`` relative to ``base`` (both absolute, normalised), posix-style; None if outside."""
    if path == base:
        return ""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix):].replace(os.sep, "/")


def _excluded(name: str, path: str, patterns: list[str], root: str) -> bool:
    if not patterns:
        return False
    relative = _relative(path, root)
    if relative is None:
        relative = path.replace(os.sep, "/")
    for pattern in patterns:
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(
            relative, pattern.rstrip("/") + "/*"
        ):
            return True
    return False


def _gitignore(directory: str) -> Optional[pathspec.PathSpec]:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
    for base, spec in specs:
        relative = _relative(path, base)
        if relative is None or relative == "":
            continue
        if spec.match_file(relative + ("/" if is_dir else "")):
            return True
    return False


def _git_root(directory: str) -> Optional[str]:
    candidate = directory
    while True:
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent


def discover(paths: Iterable[str], exclude: Iterable[str] = (), root: Optional[Path] = None) -> Discovery:
    result = Discovery()
    patterns = list(exclude)
    root_text = os.path.abspath(root or Path.cwd())
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            result.missing.append(raw)
            continue
        if path.is_dir():
            before = len(result.files)
            _walk(raw, patterns, root_text, result.files, seen)
            if len(result.files) == before:
                result.empty.append(raw)
        else:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                result.files.append(path)
    return result


def _walk(top: str, patterns: list[str], root: str, out: list[Path], seen: set[str]) -> None:
    absolute_top = os.path.realpath(top)
    specs: list[tuple[str, pathspec.PathSpec]] = []
    git_root = _git_root(absolute_top)
    if git_root is not None and git_root != absolute_top:
        # .gitignore files between the repository root and ``top`` apply too ...
        chain = [git_root]
        relative = _relative(os.path.dirname(absolute_top), git_root) or ""
        for part in [p for p in relative.split("/") if p]:
            chain.append(os.path.join(chain[-1], part))
        for directory in chain:
            spec = _gitignore(directory)
            if spec is not None:
                specs.append((directory, spec))
        # ... unless they ignore ``top`` itself: a directory named on the command line is
        # linted (say, site-packages inside an ignored .venv); its own .gitignore still applies
        ancestors = [absolute_top]
        while ancestors[-1] != git_root and os.path.dirname(ancestors[-1]) != ancestors[-1]:
            ancestors.append(os.path.dirname(ancestors[-1]))
        if any(_ignored(ancestor, True, specs) for ancestor in ancestors):
            specs = []
    _walk_directory(top.rstrip(os.sep) or os.sep, absolute_top, patterns, root, out, seen, set(), specs)


def _walk_directory(
    shown: str,
    absolute: str,
    patterns: list[str],
    root: str,
    out: list[Path],
    seen: set[str],
    visited: set[str],
    specs: list[tuple[str, pathspec.PathSpec]],
) -> None:
    real = os.path.realpath(absolute)
    if real in visited:
        return  # a symlink loop, or a second way into the same directory
    visited.add(real)
    local = _gitignore(absolute)
    if local is not None:
        specs = [*specs, (absolute, local)]
    try:
        entries = sorted(os.scandir(absolute), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        name = entry.name
        entry_absolute = os.path.join(absolute, name)
        entry_shown = os.path.join(shown, name) if shown != "." else name
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        if is_dir:
            if name in SKIPPED_DIRECTORIES or _is_virtualenv(entry_absolute):
                continue
            if _excluded(name, entry_absolute, patterns, root) or _ignored(entry_absolute, True, specs):
                continue
            _walk_directory(entry_shown, entry_absolute, patterns, root, out, seen, visited, specs)
        elif name.endswith(SUFFIXES):
            if _excluded(name, entry_absolute, patterns, root) or _ignored(entry_absolute, False, specs):
                continue
            key = os.path.realpath(entry_absolute) if entry.is_symlink() else entry_absolute
            if key not in seen:
                seen.add(key)
                out.append(Path(entry_shown))
