"""Which program flags a call runs under: ``if train_on_gpu: images = images.cuda()`` moves only
when the flag is set, and ``x.numpy() if not train_on_gpu else x.cpu().numpy()`` converts only
when it is not. A value placed on an accelerator under one setting of a flag is not there on a
path that runs only under the other setting (shared by the rules that would otherwise take the
GPU run's placement for every path)."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.names import dotted_name


def _flag_test(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """``flag`` / ``args.cuda`` -> (its spelling, True); ``not flag`` -> (its spelling, False);
    None for any other test (a comparison, a call, a combination)."""
    truth = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, truth = test.expression, not truth
    if isinstance(test, (cst.Name, cst.Attribute)):
        spelled = dotted_name(test)
        if spelled is not None:
            return spelled, truth
    return None


class BranchConditions(cst.CSTVisitor):
    """Per call of the walked code: the conditions of its enclosing ``if``/``elif``/conditional
    expressions that ``read`` understands (a test -> (what it asks about, True), or False for its
    negation), each with whether it holds where the call runs, outermost first."""

    def __init__(self, read: Callable[[cst.BaseExpression], Optional[tuple[str, bool]]]) -> None:
        self.read = read
        self.conditions: dict[int, tuple[tuple[str, bool], ...]] = {}
        self._stack: list[tuple[str, bool]] = []

    def _branches(self, test: cst.BaseExpression, body: cst.CSTNode, orelse: Optional[cst.CSTNode]) -> bool:
        walk.visit(test, self)
        condition = self.read(test)
        for branch, taken in ((body, True), (orelse, False)):
            if branch is None:
                continue
            if condition is not None:
                self._stack.append((condition[0], condition[1] if taken else not condition[1]))
            walk.visit(branch, self)
            if condition is not None:
                self._stack.pop()
        return False

    def visit_If(self, node: cst.If) -> bool:
        return self._branches(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        return self._branches(node.test, node.body, node.orelse)

    def visit_Call(self, node: cst.Call) -> None:
        if self._stack:
            self.conditions[id(node)] = tuple(self._stack)


class FlagPaths(BranchConditions):
    """The program flags each call runs under (see the module's docs)."""

    def __init__(self) -> None:
        super().__init__(_flag_test)

    def exclusive(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """Do the two calls run under opposite settings of one flag (never on the same run)?"""
        one, other = dict(self.conditions.get(id(first), ())), dict(self.conditions.get(id(second), ()))
        return any(flag in other and other[flag] != setting for flag, setting in one.items())


def asks_cuda_available(test: cst.BaseExpression) -> bool:
    """``torch.cuda.is_available()`` (alone, not beside a count of the GPUs)."""
    return isinstance(test, cst.Call) and (dotted_name(test.func) or "").endswith("cuda.is_available")


def _gpu_test(test: cst.BaseExpression) -> Optional[tuple[str, bool]]:
    """``torch.cuda.is_available()`` -> True, ``not torch.cuda.is_available()`` -> False."""
    truth = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, truth = test.expression, not truth
    return ("torch.cuda.is_available()", truth) if asks_cuda_available(test) else None


def calls_without_gpu(function: cst.FunctionDef) -> frozenset[int]:
    """The calls (by id) of ``function`` that run only where ``torch.cuda.is_available()`` is
    False (its ``else`` branch, ``if not torch.cuda.is_available():``): code for a machine
    without a GPU, where the program's tensors are on the host."""
    finder = BranchConditions(_gpu_test)
    walk.visit(function.body, finder)
    return frozenset(call for call, conditions in finder.conditions.items() if ("torch.cuda.is_available()", False) in conditions)


def flag_paths(module: cst.Module) -> FlagPaths:
    finder = FlagPaths()
    walk.visit(module, finder)
    return finder
