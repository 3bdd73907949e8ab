"""What every rule is: a class carrying its code, name, severity, docs and examples."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Optional, Sequence

from devicelint.findings import Severity

if TYPE_CHECKING:
    from devicelint.analysis.events import BinaryEvent, CallEvent
    from devicelint.analysis.values import Value
    from devicelint.rule_api import RuleContext
    import libcst as cst

#: an embedded example marks each line it expects flagged with this comment
EXPECT_MARKER = re.compile(r"#\s*expect:\s*((?:DL\d{3}[ ,]*)+)")

_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    """An embedded case. ``code`` marks flagged lines with ``# expect: DLnnn``."""

    code: str
    fixed: Optional[str] = None


class Rule:
    """Base of all rules. Subclasses override only the event hooks they need.

    The docstring holds the docs in four sections: ``## What it does``, ``## Why is this bad?``,
    ``## Example`` and ``## Use instead``.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    #: None: the rule offers no fix; otherwise whether its fix is safe to apply unreviewed
    fix_safety: ClassVar[Optional[str]] = None
    valid: ClassVar[Sequence[str]] = ()
    invalid: ClassVar[Sequence[Example]] = ()
    #: codes of rules whose finding on the very same span says it better: this rule's finding
    #: there is dropped (one expression, one finding)
    yields_to: ClassVar[tuple[str, ...]] = ()
    #: the rule weighs where values are, so it also hears the passes that run a function on
    #: what one of its calls hands it (see Summaries._specialise_by_call_site); its findings
    #: there name that call. Rules that weigh the code's shape hear each body once
    follows_call_sites: ClassVar[bool] = False

    def __init__(self, ctx: "RuleContext") -> None:
        self.ctx = ctx

    # Event hooks. The engine calls only the hooks a rule overrides.
    def on_call(self, event: "CallEvent") -> None:  # pragma: no cover - interface
        pass

    def on_binary(self, event: "BinaryEvent") -> None:  # pragma: no cover - interface
        pass

    def on_expression_statement(self, node: "cst.Expr", value: "Value") -> None:  # pragma: no cover
        pass

    def on_subscript_assign(self, target: "cst.Subscript", value_node: "cst.BaseExpression", value: "Value") -> None:  # pragma: no cover
        pass

    def on_condition(self, node: "cst.BaseExpression", value: "Value") -> None:  # pragma: no cover
        pass

    def on_assign(self, statement: "cst.CSTNode", target: "cst.BaseExpression", value_node: "cst.BaseExpression", value: "Value") -> None:  # pragma: no cover
        pass

    def on_index(self, node: "cst.Subscript", base: "Value", index_node: "cst.BaseExpression", index: "Value") -> None:  # pragma: no cover
        pass

    def on_return(self, node: "cst.Return", value: "Value") -> None:  # pragma: no cover
        """``return value`` in the function being analysed."""

    def on_ndarray_store(self, target: "cst.Subscript", value_node: "cst.BaseExpression", value: "Value") -> None:  # pragma: no cover
        """``array[i] = value`` where ``array`` is a numpy array."""

    def on_index_put(self, target: "cst.Subscript", base: "Value", index: "Value", value_node: "cst.BaseExpression", value: "Value") -> None:  # pragma: no cover
        """``base[index] = value`` with a tensor index: ``index_put_``, which needs ``value`` on ``base``'s device."""

    def finish(self) -> None:  # pragma: no cover - interface
        pass

    @classmethod
    def docs(cls) -> dict[str, str]:
        """The docstring's sections, keyed by heading."""
        text = _dedent(cls.__doc__ or "")
        sections: dict[str, str] = {}
        matches = list(_SECTION.finditer(text))
        for index, match in enumerate(matches):
            end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
            sections[match.group(1).strip()] = text[match.end():end].strip("\n")
        return sections

    @classmethod
    def render_docs(cls) -> str:
        header = f"# {cls.code} {cls.name} ({cls.severity.value})"
        lines = [header, "", cls.summary, ""]
        fix = {"safe": "Fix: available (safe).", "unsafe": "Fix: available (unsafe: applied with --unsafe-fixes)."}.get(
            cls.fix_safety or "", "Fix: none."
        )
        lines.append(fix)
        if not cls.default_enabled:
            lines.append(f"Off by default: enable it with --select {cls.code}.")
        lines.append("")
        for heading, body in cls.docs().items():
            lines.extend([f"## {heading}", body, ""])
        return "\n".join(lines).rstrip() + "\n"


def _dedent(text: str) -> str:
    lines = text.expandtabs().splitlines()
    indents = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(indents) if indents else 0
    return "\n".join([lines[0].strip()] + [line[margin:] for line in lines[1:]]) if lines else ""


def expected_findings(code: str) -> list[tuple[int, str]]:
    """(line, code) pairs marked in an example or fixture with ``# expect: DLnnn``."""
    expected = []
    for number, line in enumerate(code.splitlines(), start=1):
        match = EXPECT_MARKER.search(line)
        if match:
            for rule_code in re.findall(r"DL\d{3}", match.group(1)):
                expected.append((number, rule_code))
    return expected
