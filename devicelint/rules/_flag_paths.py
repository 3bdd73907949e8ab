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


#: attributes whose test asks where a tensor is (``x.is_cuda``, ``x.device.type == "cuda"``)
_DEVICE_QUESTIONS = frozenset({"is_cuda", "is_cpu", "device", "is_mps", "is_xpu"})


class _Guards(cst.CSTVisitor):
    """Per call, the tests of its enclosing ``if``/``elif``/conditional expressions; and the
    flags (names, attributes) whose ``if``/conditional expression chooses a place: an arm that
    names a device (``"cuda"``, ``"cpu"``) or moves something (``.cuda()``, ``.to(...)``)."""

    def __init__(self) -> None:
        self.tests: dict[int, tuple[cst.BaseExpression, ...]] = {}
        self.placing_flags: set[str] = set()
        self._stack: list[cst.BaseExpression] = []

    def _branches(self, test: cst.BaseExpression, arms: tuple[Optional[cst.CSTNode], ...]) -> bool:
        walk.visit(test, self)
        flag = _flag_test(test)
        if flag is not None and any(arm is not None and _places(arm) for arm in arms):
            self.placing_flags.add(flag[0])
        self._stack.append(test)
        for arm in arms:
            if arm is not None:
                walk.visit(arm, self)
        self._stack.pop()
        return False

    def visit_If(self, node: cst.If) -> bool:
        return self._branches(node.test, (node.body, node.orelse))

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        return self._branches(node.test, (node.body, node.orelse))

    def visit_Call(self, node: cst.Call) -> None:
        if self._stack:
            self.tests[id(node)] = tuple(self._stack)


class _Places(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        text = node.value.strip("'\"rbuRBU")
        if text == "cpu" or text.startswith("cuda"):
            self.found = True

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("cuda", "to", "cpu") and not _follows_tensor_index(node):
            self.found = True


def _follows_tensor_index(call: cst.Call) -> bool:
    """``t.cuda(x.get_device())``: a move that follows ``x``'s GPU, not a device the code
    chooses (on a CPU run its index is -1): no evidence that a test selecting it is about placement."""
    if len(call.args) != 1 or call.args[0].keyword is not None:
        return False
    index = call.args[0].value
    return (
        isinstance(index, cst.Call)
        and not index.args
        and isinstance(index.func, cst.Attribute)
        and index.func.attr.value == "get_device"
    )


def _places(node: cst.CSTNode) -> bool:
    finder = _Places()
    walk.visit(node, finder)
    return finder.found


class PlacementGuards:
    """Which calls run only on paths that a test about placement selects: a test that asks
    where a tensor is (``if x.is_cuda:``), whether a GPU is there, or a flag that elsewhere in
    the module chooses a device or a move (``dev = "cuda" if use_gpu else "cpu"``). A tensor
    made on the host on such a path is on the host on purpose: where the test holds otherwise,
    the code's tensors are placed otherwise too."""

    def __init__(self, module: cst.Module) -> None:
        self._guards = _Guards()
        walk.visit(module, self._guards)

    def guarded(self, call: cst.CSTNode) -> bool:
        return any(self._about_placement(test) for test in self._guards.tests.get(id(call), ()))

    def tests_of(self, call: cst.CSTNode) -> tuple[cst.BaseExpression, ...]:
        """The tests of the branches ``call`` is in, outermost first."""
        return self._guards.tests.get(id(call), ())

    def conditional(self, call: cst.CSTNode) -> bool:
        """Does ``call`` run only where some test holds (the entry-point guard
        ``if __name__ == "__main__":`` aside)? A move under one (``if use_cuda: x = x.cuda()``,
        ``x.cuda(i) if i >= 0 else x``) leaves the value where it was on the other path."""
        return any(not _entry_point_test(test) for test in self._guards.tests.get(id(call), ()))

    def _about_placement(self, test: cst.BaseExpression) -> bool:
        finder = _Questions(self._guards.placing_flags)
        walk.visit(test, finder)
        return finder.found


def _entry_point_test(test: cst.BaseExpression) -> bool:
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


class _Questions(cst.CSTVisitor):
    def __init__(self, flags: set[str]) -> None:
        self.flags = flags
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value in _DEVICE_QUESTIONS or node.attr.value in ("is_available", "device_count"):
            self.found = True
        if dotted_name(node) in self.flags:
            self.found = True
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.flags:
            self.found = True
