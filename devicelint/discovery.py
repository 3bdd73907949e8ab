"""Which files to lint, and with which settings: recurse directories, skip what .gitignore
files and the governing configuration's exclusions say (each directory is judged by the
configuration nearest to it); a path named explicitly is linted unless --force-exclude."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import pathspec

from devicelint.config import ConfigResolver, Overrides, Settings, relative_to

SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    #: the settings each file is linted with (``settings[i]`` for ``files[i]``)
    settings: list[Settings] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: directories given on the command line that held no Python file
    empty: list[str] = field(default_factory=list)

    def add(self, path: Path, settings: Settings) -> None:
        self.files.append(path)
        self.settings.append(settings)

    def groups(self) -> list[tuple[Settings, list[Path]]]:
        """The files grouped by the settings they are linted with, in the order first met."""
        grouped: dict[int, tuple[Settings, list[Path]]] = {}
        for path, settings in zip(self.files, self.settings):
            grouped.setdefault(id(settings), (settings, []))[1].append(path)
        return list(grouped.values())


def _is_virtualenv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


def _gitignore(directory: str) -> Optional[pathspec.PathSpec]:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: str, is_dir: bool, specs: list[tuple[str, pathspec.PathSpec]]) -> bool:
    for base, spec in specs:
        relative = relative_to(path, base)
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


def discover(paths: Iterable[str], resolver: Optional[ConfigResolver] = None) -> Discovery:
    """``resolver`` says which settings govern each path; by default, the configuration files
    found from the paths themselves, with no command-line options."""
    if resolver is None:
        resolver = ConfigResolver(Overrides(base=Path.cwd()))
    result = Discovery()
    seen: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            result.missing.append(raw)
            continue
        settings = resolver.for_path(raw)
        if settings.force_exclude and settings.excludes_named(raw):
            continue
        if path.is_dir():
            before = len(result.files)
            _walk(raw, resolver, result, seen)
            if len(result.files) == before:
                result.empty.append(raw)
        else:
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                result.add(path, settings)
    return result


def _walk(top: str, resolver: ConfigResolver, out: Discovery, seen: set[str]) -> None:
    absolute_top = os.path.realpath(top)
    specs: list[tuple[str, pathspec.PathSpec]] = []
    git_root = _git_root(absolute_top)
    if git_root is not None and git_root != absolute_top:
        # .gitignore files between the repository root and ``top`` apply too ...
        chain = [git_root]
        relative = relative_to(os.path.dirname(absolute_top), git_root) or ""
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
    _walk_directory(top.rstrip(os.sep) or os.sep, absolute_top, resolver, out, seen, set(), specs)


def _walk_directory(
    shown: str,
    absolute: str,
    resolver: ConfigResolver,
    out: Discovery,
    seen: set[str],
    visited: set[str],
    specs: list[tuple[str, pathspec.PathSpec]],
) -> None:
    real = os.path.realpath(absolute)
    if real in visited:
        return  # a symlink loop, or a second way into the same directory
    visited.add(real)
    # the configuration nearest to this directory judges its entries (a subdirectory with its
    # own configuration is entered or skipped by this one's exclusions, then judged by its own)
    settings = resolver.for_directory(absolute)
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
            if _is_virtualenv(entry_absolute) or settings.exclusions.matches(name, entry_absolute):
                continue
            if _ignored(entry_absolute, True, specs):
                continue
            _walk_directory(entry_shown, entry_absolute, resolver, out, seen, visited, specs)
        elif name.endswith(SUFFIXES):
            if settings.exclusions.matches(name, entry_absolute) or _ignored(entry_absolute, False, specs):
                continue
            key = os.path.realpath(entry_absolute) if entry.is_symlink() else entry_absolute
            if key not in seen:
                seen.add(key)
                out.add(Path(entry_shown), settings)
