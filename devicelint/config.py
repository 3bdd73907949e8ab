"""Configuration: ``[tool.devicelint]`` in pyproject.toml files, found for each linted path (the
nearest one at or above it, as ruff does), with the command line's options on top."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from devicelint.rules import Rule
from devicelint.selection import SelectionError, resolve, validate_selectors

KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude", "force-exclude", "per-file-ignores")

#: Skipped wherever they are met. Like ruff's default ``exclude``: a configured or command-line
#: ``exclude`` replaces this list, and ``extend-exclude`` adds to it.
DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "build", "dist", "node_modules",
    "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".devicelint_cache", ".eggs",
)


class ConfigError(Exception):
    pass


@dataclass
class Config:
    path: Optional[Path] = None
    select: Optional[list[str]] = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    #: None keeps DEFAULT_EXCLUDE
    exclude: Optional[list[str]] = None
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False
    #: glob -> codes ignored in matching files
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)


def _has_table(candidate: Path) -> bool:
    """Whether the pyproject.toml ``candidate`` configures devicelint."""
    try:
        text = candidate.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        # a broken file only matters if it is the one that configures us (load_config says why)
        return "[tool.devicelint" in text
    tool = data.get("tool", {})
    return isinstance(tool, dict) and "devicelint" in tool


def _config_file_in(directory: str) -> Optional[Path]:
    candidate = os.path.join(directory, "pyproject.toml")
    if os.path.isfile(candidate) and _has_table(Path(candidate)):
        return Path(candidate)
    return None


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.devicelint] table."""
    directory = os.path.realpath(start)
    if os.path.isfile(directory):
        directory = os.path.dirname(directory)
    while True:
        found = _config_file_in(directory)
        if found is not None:
            return found
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_config(path: Optional[Path]) -> Config:
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not valid UTF-8") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    table = data.get("tool", {}).get("devicelint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.devicelint] in {path} must be a table")
    where = f"[tool.devicelint] of {path}"
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in {where} (known keys: {', '.join(KEYS)})")
    config = Config(path=path)
    try:
        if "select" in table:
            config.select = validate_selectors(_strings(table, "select", where), f"'select' of {where}")
        config.ignore = validate_selectors(_strings(table, "ignore", where), f"'ignore' of {where}")
        config.extend_select = validate_selectors(_strings(table, "extend-select", where), f"'extend-select' of {where}")
        if "exclude" in table:
            config.exclude = _strings(table, "exclude", where)
        config.extend_exclude = _strings(table, "extend-exclude", where)
        force_exclude = table.get("force-exclude", False)
        if not isinstance(force_exclude, bool):
            raise ConfigError(f"'force-exclude' in {where} must be true or false")
        config.force_exclude = force_exclude
        per_file = table.get("per-file-ignores", {})
        if not isinstance(per_file, dict):
            raise ConfigError(f"'per-file-ignores' in {where} must be a table of glob = [codes]")
        for pattern, codes in per_file.items():
            if not isinstance(codes, list) or not all(isinstance(code, str) for code in codes):
                raise ConfigError(f"'per-file-ignores' entry {pattern!r} in {where} must be a list of codes")
            config.per_file_ignores[pattern] = validate_selectors(codes, f"'per-file-ignores' of {where}")
    except SelectionError as error:
        raise ConfigError(str(error)) from None
    return config


def _strings(table: dict[str, Any], key: str, where: str) -> list[str]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{key!r} in {where} must be a list of strings")
    return list(value)


@dataclass(frozen=True)
class Overrides:
    """The command line's options, applied on top of whichever configuration governs a file.
    Selectors are validated already; relative --exclude globs are anchored at ``base`` (the
    current directory), as a path typed on the command line is."""

    base: Path
    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    #: None keeps the configured (or default) exclude list
    exclude: Optional[tuple[str, ...]] = None
    extend_exclude: tuple[str, ...] = ()
    #: None keeps the configured value
    force_exclude: Optional[bool] = None


class Exclusions:
    """Glob patterns in ruff's manner: each is matched against an entry's name and against its
    path relative to the pattern's base directory (an absolute pattern, against the absolute
    path). ``*`` crosses ``/`` as in fnmatch. Compiled once per configuration, since discovery
    asks about every entry it walks."""

    def __init__(self, patterns: Sequence[tuple[str, str]]) -> None:
        """``patterns``: (glob, absolute base directory) pairs."""
        names: list[str] = []
        absolute: list[str] = []
        by_base: dict[str, list[str]] = {}
        for raw, base in patterns:
            glob = raw.strip().replace(os.sep, "/").rstrip("/") or raw
            if glob.startswith("./"):
                glob = glob[2:]
            translated = fnmatch.translate(glob)
            if "/" not in glob:
                names.append(translated)
            if os.path.isabs(glob):
                absolute.append(translated)
            else:
                by_base.setdefault(base, []).append(translated)
        self._name = _union(names)
        self._absolute = _union(absolute)
        self._relative = [(base, _union(translated)) for base, translated in by_base.items()]

    def matches(self, name: str, path: str) -> bool:
        """Whether the entry called ``name`` at the absolute, normalised ``path`` is excluded."""
        if self._name is not None and self._name.match(name):
            return True
        if self._absolute is not None and self._absolute.match(path.replace(os.sep, "/")):
            return True
        for base, regex in self._relative:
            relative = relative_to(path, base)
            if relative and regex.match(relative):
                return True
        return False


def _union(translated: list[str]) -> Optional["re.Pattern[str]"]:
    return re.compile("|".join(f"(?:{part})" for part in translated)) if translated else None


def relative_to(path: str, base: str) -> Optional[str]:
    """``path`` relative to ``base`` (both absolute, normalised), posix-style; None if outside."""
    if path == base:
        return ""
    prefix = base if base.endswith(os.sep) else base + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix):].replace(os.sep, "/")


@dataclass(frozen=True)
class Settings:
    """What the files one configuration governs are linted with: that configuration with the
    command line's options on top."""

    config: Config
    #: where the configuration's relative patterns and the default cache directory are: its
    #: file's directory, or the current directory for the defaults
    root: Path
    rules: tuple[type[Rule], ...]
    exclusions: Exclusions
    force_exclude: bool

    @classmethod
    def build(cls, config: Config, overrides: Overrides) -> "Settings":
        selection = resolve(
            config.select, config.extend_select, config.ignore, overrides.select, overrides.extend_select, overrides.ignore
        )
        root_directory = config.path.parent if config.path is not None else overrides.base
        root = os.path.realpath(root_directory)
        cwd = os.path.realpath(overrides.base)
        if overrides.exclude is not None:
            base_list = [(glob, cwd) for glob in overrides.exclude]
        else:
            base_list = [(glob, root) for glob in (config.exclude if config.exclude is not None else DEFAULT_EXCLUDE)]
        patterns = [*base_list, *((glob, root) for glob in config.extend_exclude), *((glob, cwd) for glob in overrides.extend_exclude)]
        force = overrides.force_exclude if overrides.force_exclude is not None else config.force_exclude
        return cls(config, Path(root), tuple(selection.rules()), Exclusions(patterns), force)

    def excludes_named(self, path: str) -> bool:
        """For a path named by the user (on the command line, or as --stdin-filename), which
        --force-exclude skips when it or a directory it is in (below the configuration's
        directory) is excluded. Need not exist."""
        absolute = _normalised(path)
        root = str(self.root)
        while True:
            name = os.path.basename(absolute)
            if not name or absolute == root:
                return False
            if self.exclusions.matches(name, absolute):
                return True
            parent = os.path.dirname(absolute)
            if parent == absolute or relative_to(parent, root) is None:
                return False
            absolute = parent

    def ignored_codes(self, path: str) -> list[str]:
        """Codes that ``per-file-ignores`` turns off in ``path`` (globs relative to the
        configuration's directory, or matching the file's name)."""
        if not self.config.per_file_ignores:
            return []
        relative = relative_to(_normalised(path), str(self.root))
        if relative is None:
            relative = Path(path).as_posix()
        name = os.path.basename(path)
        codes: list[str] = []
        for pattern, ignored in self.config.per_file_ignores.items():
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern):
                codes.extend(ignored)
        return codes

    def rules_for(self, path: str) -> list[type[Rule]]:
        """The selected rules less those per-file-ignores turns off in ``path``."""
        ignored = self.ignored_codes(path)
        return [rule for rule in self.rules if not _covered(rule.code, ignored)]

    def keeps(self, code: str, path: str) -> bool:
        """Whether a finding of ``code`` in ``path`` survives per-file-ignores."""
        return not _covered(code, self.ignored_codes(path))


def _covered(code: str, selectors: Sequence[str]) -> bool:
    return any(selector == "ALL" or code.startswith(selector) for selector in selectors)


def _normalised(path: str) -> str:
    """Absolute, with the directory's symlinks resolved (as configuration roots are) but not
    the last component's: a symlinked file is judged by where it is named."""
    absolute = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(absolute)), os.path.basename(absolute))


class ConfigResolver:
    """Which settings govern each path: with ``--config``, that file's for every path; else the
    nearest pyproject.toml with [tool.devicelint] at or above the path (so one run over two
    projects lints each with its own, and a nested project's file replaces its parent's, as in
    ruff), and for a path with none above it, the one found from the current directory."""

    def __init__(self, overrides: Overrides, explicit: Optional[Path] = None) -> None:
        self._overrides = overrides
        self._settings: dict[Optional[Path], Settings] = {}
        #: real directory -> the config file governing it (None: none at or above it)
        self._governing: dict[str, Optional[Path]] = {}
        self._explicit = explicit
        self._fallback = explicit if explicit is not None else find_config(overrides.base)
        self._settings_of(self._fallback)  # a broken configuration stops the run before any work

    def for_path(self, path: str) -> Settings:
        """The settings of a file or directory (which need not exist: --stdin-filename)."""
        absolute = os.path.abspath(path)
        directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        return self.for_directory(directory)

    def for_directory(self, directory: str) -> Settings:
        if self._explicit is not None:
            return self._settings_of(self._explicit)
        governing = self._governing_file(os.path.realpath(directory))
        return self._settings_of(governing if governing is not None else self._fallback)

    def _governing_file(self, directory: str) -> Optional[Path]:
        unresolved: list[str] = []
        found: Optional[Path] = None
        current = directory
        while current not in self._governing:
            unresolved.append(current)
            found = _config_file_in(current)
            if found is not None:
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        else:
            found = self._governing[current]
        for seen in unresolved:
            self._governing[seen] = found
        return found

    def _settings_of(self, config_file: Optional[Path]) -> Settings:
        if config_file not in self._settings:
            self._settings[config_file] = Settings.build(load_config(config_file), self._overrides)
        return self._settings[config_file]
