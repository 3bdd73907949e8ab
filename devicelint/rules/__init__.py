"""Rules: one per file, named ``dlNNN_slug.py``, discovered by walking this package."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re

from devicelint.rules.base import Example, Rule

_RULE_MODULE = re.compile(r"^dl\d{3}_[a-z0-9_]+$")


class RegistryError(Exception):
    pass


@functools.lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every rule class, sorted by code. Duplicate codes or names are a packaging bug."""
    found: dict[str, type[Rule]] = {}
    names: dict[str, str] = {}
    for module_info in pkgutil.iter_modules(__path__):
        if not _RULE_MODULE.match(module_info.name):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for attribute in vars(module).values():
            if isinstance(attribute, type) and issubclass(attribute, Rule) and attribute is not Rule and attribute.__module__ == module.__name__:
                code = attribute.code
                if code in found:
                    raise RegistryError(f"rule code {code} is defined twice")
                if attribute.name in names:
                    raise RegistryError(f"rule name {attribute.name} is used by {names[attribute.name]} and {code}")
                if module_info.name[:5] != code.lower():
                    raise RegistryError(f"{module_info.name}.py defines {code}: file and code must agree")
                found[code] = attribute
                names[attribute.name] = code
    return tuple(found[code] for code in sorted(found))


def rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


__all__ = ["Example", "Rule", "RegistryError", "all_rules", "rules_by_code"]
