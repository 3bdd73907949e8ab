"""Where a program promises to run without a GPU: it chooses the CPU when there is none.

A choice is a conditional expression with a CUDA device on one arm and the CPU on the other
(``torch.device("cuda" if torch.cuda.is_available() else "cpu")``, ``torch.device(f"cuda:{ids[0]}")
if ids else torch.device("cpu")``), or an ``if`` whose two one-line branches bind a CUDA device
and the CPU. The promise covers the code that choice governs:

* a choice in module-level code (a global ``device``, the ``if __name__ == "__main__":`` block)
  covers that code, the functions it calls, and the functions that read the name it binds
  (``device = ...`` at the top, then ``def train(): model.to(device)``);
* a choice in a function covers that function and what it calls, by name, transitively
  (``main()`` chooses, then calls ``load_model(...)`` and ``trainer.train()``);
* a choice in a method covers every method of its class and of the file's classes derived from
  it (``self.device`` chosen in a base model's ``__init__``), and what those call.

Calls are matched by the name they call (``f(...)``, ``obj.f(...)``; a class's name calls its
``__init__``), so a promise may reach a same-named function that the choosing code never runs:
it only ever widens where hard-coded CUDA is looked at, within a file that does choose the CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis import helpers, walk
from devicelint.analysis.names import dotted_name
from devicelint.rules._cuda_code import device_spelling


@dataclass
class _Function:
    node: cst.FunctionDef
    class_name: Optional[str]
    #: the names it calls (``f`` of ``f(...)`` and of ``obj.f(...)``)
    calls: set[str] = field(default_factory=set)
    #: the plain names it reads or writes
    names: set[str] = field(default_factory=set)


class CpuChoices(cst.CSTVisitor):
    """One walk of a module: the program's choices of the CPU, and which functions they govern."""

    def __init__(self) -> None:
        #: the choices, each with the function it is in (None at module level)
        self.choices: list[tuple[cst.CSTNode, Optional[_Function]]] = []
        #: every call of the module by the name it calls (``f`` of ``f(...)`` and ``obj.f(...)``)
        self.calls_by_name: dict[str, list[cst.Call]] = {}
        #: names module-level code binds to a choice (``device = torch.device(... else "cpu")``)
        self._chosen_names: set[str] = set()
        #: module-level code, as a function: what it calls
        self._module_code = _Function(cst.FunctionDef(cst.Name("module_level_code"), cst.Parameters(), cst.IndentedBlock([])), None)
        #: the targets of the module-level assignment being walked
        self._assigning: list[str] = []
        self._functions: list[_Function] = []
        self._function_stack: list[_Function] = []
        self._class_stack: list[str] = []
        #: per class of the file: the names of its bases
        self._bases: dict[str, set[str]] = {}
        #: per function (by id; a nested function by its own id too): the first choice whose
        #: promise covers it
        self._governed: Optional[dict[int, cst.CSTNode]] = None
        #: nested functions (by id), each with the outermost function or method holding it
        self._owner: dict[int, _Function] = {}

    # -- the walk --------------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_stack.append(node.name.value)
        bases = self._bases.setdefault(node.name.value, set())
        for base in node.bases:
            name = dotted_name(base.value)
            if name is not None:
                bases.add(name.rsplit(".", 1)[-1])

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # a method is a function directly in a class body; a nested function belongs to its
        # enclosing function's code (its calls are that function's)
        if self._function_stack:
            self._owner[id(node)] = self._function_stack[0]
            return
        function = _Function(node, self._class_stack[-1] if self._class_stack else None)
        self._functions.append(function)
        self._function_stack.append(function)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if self._function_stack and self._function_stack[-1].node is original_node:
            self._function_stack.pop()

    def visit_Call(self, node: cst.Call) -> None:
        code = self._function_stack[-1] if self._function_stack else self._module_code
        func = node.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if name is not None:
            code.calls.add(name)
            self.calls_by_name.setdefault(name, []).append(node)

    def visit_Name(self, node: cst.Name) -> None:
        if self._function_stack:
            self._function_stack[-1].names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk.visit(node.value, self)  # `x.device` reads `x`, not a name `device`
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk.visit(node.value, self)  # `device=` is a keyword, not a name read
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self._function_stack:
            self._assigning = [name for name in (dotted_name(target.target) for target in node.targets) if name is not None]

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._assigning = []

    def visit_IfExp(self, node: cst.IfExp) -> None:
        if _chooses_between(node.body, node.orelse):
            self._choose(node)

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.Else) and _chooses_between(_bound_value(node.body), _bound_value(node.orelse.body)):
            self._choose(node)

    def _choose(self, node: cst.CSTNode) -> None:
        self.choices.append((node, self._function_stack[-1] if self._function_stack else None))
        if not self._function_stack:
            self._chosen_names.update(self._assigning)
            if isinstance(node, cst.If):
                body = helpers.block_statements(node.body)[0]
                assert isinstance(body, helpers.SIMPLE_LINES) and isinstance(body.body[0], cst.Assign)
                self._chosen_names.update(name for name in (dotted_name(target.target) for target in body.body[0].targets) if name is not None)

    # -- questions ---------------------------------------------------------------------------------

    def first_governing(self, function: Optional[cst.FunctionDef]) -> Optional[cst.CSTNode]:
        """The first choice whose promise covers ``function`` (None: module-level code), if any."""
        if function is None:
            return next((node for node, chooser in self.choices if chooser is None), None)
        owner = self._owner.get(id(function))
        return self._governed_functions().get(id(owner.node if owner is not None else function))

    def _governed_functions(self) -> dict[int, cst.CSTNode]:
        if self._governed is not None:
            return self._governed
        by_name: dict[str, list[_Function]] = {}
        for function in self._functions:
            by_name.setdefault(function.node.name.value, []).append(function)
        for class_name in self._bases:
            by_name.setdefault(class_name, []).extend(
                function for function in self._functions if function.class_name == class_name and function.node.name.value == "__init__"
            )
        governed: dict[int, cst.CSTNode] = {}
        for choice, chooser in self.choices:
            if chooser is None:
                pending = [self._module_code, *(function for function in self._functions if function.names & self._chosen_names)]
            elif chooser.class_name is None:
                pending = [chooser]
            else:
                family = self._derived_from(chooser.class_name)
                pending = [function for function in self._functions if function.class_name in family]
            reached: set[int] = set()
            while pending:
                function = pending.pop()
                if id(function.node) in reached:
                    continue
                reached.add(id(function.node))
                governed.setdefault(id(function.node), choice)
                for name in function.calls:
                    pending.extend(by_name.get(name, ()))
        self._governed = governed
        return governed

    def _derived_from(self, class_name: str) -> set[str]:
        """``class_name`` and the file's classes derived from it, directly or not."""
        family = {class_name}
        grew = True
        while grew:
            grew = False
            for name, bases in self._bases.items():
                if name not in family and bases & family:
                    family.add(name)
                    grew = True
        return family


def _chooses_between(one: Optional[cst.BaseExpression], other: Optional[cst.BaseExpression]) -> bool:
    """Is one of the two a CUDA device and the other the CPU?"""
    if one is None or other is None:
        return False
    return {device_spelling(one), device_spelling(other)} == {"cuda", "cpu"}


def _bound_value(block: cst.BaseSuite) -> Optional[cst.BaseExpression]:
    """The value of the only statement of a one-statement branch, if it is an assignment (on a
    line of its own or on the branch's header line: ``else: device = "cpu"``)."""
    statements = helpers.block_statements(block)
    if len(statements) != 1:
        return None
    line = statements[0]
    if isinstance(line, helpers.SIMPLE_LINES) and len(line.body) == 1 and isinstance(line.body[0], cst.Assign):
        return line.body[0].value
    return None
