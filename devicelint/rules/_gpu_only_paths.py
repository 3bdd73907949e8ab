"""Which calls of a file run only where a GPU is: shared by the rules that flag CUDA hard-coded
in a program that also runs without one (DL301's CUDA-mapped loads, DL302's moves)."""

from __future__ import annotations

import re
from typing import Optional, Sequence

import libcst as cst

from devicelint.analysis import walk

#: words of a test, decorator or guard that ask for (or about) a GPU: a path that runs only with one
_ASKS_FOR_GPU = re.compile(r"cuda|gpu|is_available|device_count|device|accelerator", re.IGNORECASE)
#: calls that end a path: a guard's body that makes one keeps the rest of its scope from running
_ENDS_PATH = re.compile(r"\b(exit|quit|skip|skipTest|abort)\s*\(")


class GpuOnlyPaths(cst.CSTVisitor):
    """Which of ``targets`` (calls) run only where a GPU is: inside an ``if``/``while`` or
    conditional expression whose test asks about the device, a function or class whose
    decorators do (``@require_torch_gpu``, ``skipIf(not torch.cuda.is_available())``), or after
    a guard of its scope (``if not torch.cuda.is_available(): raise ...``, ``assert use_cuda``).
    Words only withhold a finding here, never claim a device."""

    def __init__(self, targets: frozenset[int]) -> None:
        self.targets = targets
        self.gated: set[int] = set()
        self._depth = 0
        #: per enclosing scope (module, class, function): a guard has been passed in it
        self._guarded: list[bool] = [False]
        #: per enclosing class or function: its decorators ask for a GPU
        self._scopes: list[bool] = []

    def _asks(self, node: cst.CSTNode) -> bool:
        return _ASKS_FOR_GPU.search(cst.Module([]).code_for_node(node)) is not None

    def _enter_scope(self, decorators: Sequence[cst.Decorator]) -> None:
        gated = any(self._asks(decorator) for decorator in decorators)
        self._depth += gated
        self._scopes.append(gated)
        self._guarded.append(False)

    def _leave_scope(self) -> None:
        self._depth -= self._scopes.pop()
        self._guarded.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter_scope(node.decorators)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave_scope()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter_scope(node.decorators)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave_scope()

    def _branches(self, test: cst.BaseExpression, *branches: Optional[cst.CSTNode]) -> bool:
        walk.visit(test, self)
        asks = self._asks(test)
        self._depth += asks
        for branch in branches:
            if branch is not None:
                walk.visit(branch, self)
        self._depth -= asks
        return False

    def visit_If(self, node: cst.If) -> bool:
        self._branches(node.test, node.body, node.orelse)
        if self._asks(node.test) and _ends_path(node.body):
            self._guarded[-1] = True
        return False

    def visit_While(self, node: cst.While) -> bool:
        return self._branches(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        return self._branches(node.test, node.body, node.orelse)

    def visit_Assert(self, node: cst.Assert) -> None:
        if self._asks(node.test):
            self._guarded[-1] = True

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self.targets and (self._depth or any(self._guarded)):
            self.gated.add(id(node))


def _ends_path(block: cst.CSTNode) -> bool:
    """Does the block raise, return or stop the program (``sys.exit()``, ``pytest.skip()``)?"""
    text = cst.Module([]).code_for_node(block)
    return re.search(r"^\s*(raise|return)\b", text, re.MULTILINE) is not None or _ENDS_PATH.search(text) is not None
