"""Which rules run: --select / --extend-select / --ignore by code, prefix or ALL, resolved by
specificity as ruff does (``--select DL --ignore DL1 --extend-select DL101`` keeps DL101).
Off-by-default rules are selected by their exact code or by ALL only."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from devicelint.rules import Rule, all_rules

_SELECTOR = re.compile(r"^(ALL|DL\d{0,3})$")


class SelectionError(ValueError):
    pass


def validate_selectors(selectors: Iterable[str], where: str) -> list[str]:
    """Normalise selectors, rejecting any that match no rule (exit 2 upstream)."""
    codes = [rule.code for rule in all_rules()]
    result = []
    for raw in selectors:
        selector = raw.strip().upper()
        if not selector:
            continue
        if not _SELECTOR.match(selector) or not any(code.startswith(selector) for code in codes) and selector != "ALL":
            raise SelectionError(f"unknown rule code or prefix {raw.strip()!r} in {where}")
        result.append(selector)
    return result


def _specificity(selector: str, rule: type[Rule]) -> int:
    """How specifically ``selector`` names ``rule``; -1 if it does not. An off-by-default
    rule (DL314) is opt-in: only its own code or ALL selects it, not a prefix such as DL3."""
    if selector == "ALL":
        return 0
    if not rule.code.startswith(selector):
        return -1
    if not rule.default_enabled and selector != rule.code:
        return -1
    return len(selector)


def _ignore_specificity(selector: str, rule: type[Rule]) -> int:
    if selector == "ALL":
        return 0
    return len(selector) if rule.code.startswith(selector) else -1


@dataclass(frozen=True)
class Selection:
    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def enabled(self, rule: type[Rule]) -> bool:
        if self.select is None:
            # the default set is as unspecific as ALL, so any --ignore prefix overrides it
            chosen = 0 if rule.default_enabled else -1
        else:
            chosen = max((_specificity(s, rule) for s in self.select), default=-1)
        chosen = max([chosen, *(_specificity(s, rule) for s in self.extend_select)])
        ignored = max((_ignore_specificity(s, rule) for s in self.ignore), default=-1)
        return chosen >= 0 and chosen > ignored

    def rules(self) -> list[type[Rule]]:
        return [rule for rule in all_rules() if self.enabled(rule)]


def resolve(
    config_select: Optional[Sequence[str]],
    config_extend: Sequence[str],
    config_ignore: Sequence[str],
    cli_select: Optional[Sequence[str]],
    cli_extend: Sequence[str],
    cli_ignore: Sequence[str],
) -> Selection:
    select = cli_select if cli_select is not None else config_select
    return Selection(
        select=tuple(select) if select is not None else None,
        extend_select=(*config_extend, *cli_extend),
        ignore=(*config_ignore, *cli_ignore),
    )
