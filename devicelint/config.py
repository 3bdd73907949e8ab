"""``[tool.devicelint]`` in the nearest pyproject.toml that has one."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.9/3.10 only
    import tomli as tomllib

from devicelint.selection import SelectionError, validate_selectors

KEYS = ("select", "ignore", "extend-select", "exclude", "per-file-ignores")


class ConfigError(Exception):
    pass


@dataclass
class Config:
    path: Optional[Path] = None
    select: Optional[list[str]] = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    #: glob -> codes ignored in matching files
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.devicelint] table."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                # a broken file only matters if it is the one that configures us
                if "[tool.devicelint" in candidate.read_text(encoding="utf-8", errors="replace"):
                    return candidate
                continue
            if "devicelint" in data.get("tool", {}):
                return candidate
    return None


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
        config.exclude = _strings(table, "exclude", where)
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
