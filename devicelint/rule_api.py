"""What a rule is handed and what it hands back: the ``RuleContext`` it reports into, and
``FixSpec``/``NodeEdit``, fixes anchored on syntax-tree nodes.

Rules import these from here, never from ``devicelint.engine``: the engine imports the rules,
so a rule importing the engine would close an import loop. The engine turns a ``FixSpec`` into
a ``devicelint.findings.Fix`` (text positions) once the file is done; ``devicelint.fixer``
applies those ``Fix`` edits to the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst

if TYPE_CHECKING:
    from devicelint.analysis.flow import FlowAnalyzer
    from devicelint.rules.base import Rule


@dataclass(frozen=True)
class NodeEdit:
    node: cst.CSTNode
    #: "replace" the node's text, or insert "before" / "after" it
    mode: str
    text: str


@dataclass(frozen=True)
class FixSpec:
    title: str
    edits: tuple[NodeEdit, ...]
    safe: bool = True


@dataclass
class PendingFinding:
    """A reported finding before positions are resolved (by the engine, once per file)."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    fix: Optional[FixSpec]
    related: tuple[tuple[cst.CSTNode, str], ...]


class RuleContext:
    """What a rule sees of the file: the analysis, the source, and ``report``."""

    def __init__(self, module: cst.Module, path: str, source: str = "") -> None:
        self.module = module
        self.path = path
        #: the text the module was parsed from
        self.source = source
        self.analyzer: FlowAnalyzer  # set by the engine before any event
        self._pending: list[PendingFinding] = []
        self._line_nodes: list[cst.CSTNode] = []
        self._rule: Optional[type[Rule]] = None
        self._seen: set[tuple[str, int]] = set()

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        fix: Optional[FixSpec] = None,
        related: Sequence[tuple[cst.CSTNode, str]] = (),
        called_from: Optional[cst.Call] = None,
    ) -> None:
        """Report ``node``. In a pass of one call site (see ``call_context``), or for an event a
        rule kept from one (``called_from``), the message names that call; a node reported
        already by the rule (by an earlier pass, say) is not reported again."""
        assert self._rule is not None
        key = (self._rule.code, id(node))
        if key in self._seen:
            return
        self._seen.add(key)
        call = called_from if called_from is not None else self.call_context
        if call is not None:
            message += f" (when called from line {self.line(call)})"
        self._pending.append(PendingFinding(self._rule, node, message, fix, tuple(related)))

    def line(self, node: cst.CSTNode) -> str:
        """A placeholder for ``node``'s line number, resolved once the file is done."""
        self._line_nodes.append(node)
        return f"\x00L{len(self._line_nodes) - 1}\x00"

    def source_of(self, node: cst.CSTNode, limit: int = 40) -> str:
        text = self.module.code_for_node(node).strip()
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def torch_nn_spelling(self, state: dict) -> Optional[str]:
        """How this file spells ``torch.nn`` where ``state`` holds (``nn``, ``torch.nn``), if at all."""
        for name in ("nn",):
            if self.analyzer.qualname_of(cst.Name(name), state) == "torch.nn":
                return name
        if self.analyzer.qualname_of(cst.Name("torch"), state) == "torch":
            return "torch.nn"
        return None

    @property
    def call_context(self) -> Optional[cst.Call]:
        """The call whose arguments the function being analysed runs on, in a pass of one call
        site (see Summaries._specialise_by_call_site); None in every other pass."""
        analyzer = getattr(self, "analyzer", None)
        return analyzer.call_context if analyzer is not None else None

    @property
    def loop_stack(self):  # type: ignore[no-untyped-def]
        return self.analyzer.loop_stack

    @property
    def in_cpu_autocast(self) -> bool:
        """Is the current statement inside a `with` block that autocasts for the CPU?"""
        return self.analyzer.cpu_autocast_depth > 0

    @property
    def current_function(self):  # type: ignore[no-untyped-def]
        return self.analyzer.current_function

    @property
    def facts(self):  # type: ignore[no-untyped-def]
        return self.analyzer.facts

    @property
    def in_module_method(self) -> bool:
        """Is the code being analysed in a method of an ``nn.Module`` other than ``__init__``
        (code that runs at every forward, on the model's device)?"""
        context = self.analyzer.current_function
        return (
            context.node is not None
            and context.class_info is not None
            and context.class_info.is_module
            and context.node.name.value != "__init__"
        )
