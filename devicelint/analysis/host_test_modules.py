"""Module classes of a pytest test file whose every instance, in that file, stays on the host.

A CPU unit test builds a small model class, calls a method or hands the object to the code
under test, and checks the result; nothing ever moves it. There ``torch.rand(2, 2)`` inside the
class's ``forward`` meets host weights, and a plain tensor attribute is never left behind by a
move: the class's methods run on the host, not on "the model's device".

The fact is withheld whenever anything in the file could put an instance elsewhere:

* the file is a pytest test file (``test_*.py``/``*_test.py`` that imports pytest or unittest);
* the class is defined at module level or directly in a function, once in that scope;
* its name is only ever called (``C(...)``), or named in ``super(C, self)`` inside it: never
  subclassed, returned by a fixture, listed in a parametrisation, or passed on as a class;
* every call is in a module-level ``test*`` function (also inside classes or functions nested
  in it), or in a method of another such class of the file that itself stays on the host;
* that test function, its decorators and parameters, the file's functions it calls (and theirs)
  and the class's body (and its bases of the file) show no placement at all: no move method
  (``.to(``, ``.cuda(``, ``.to_empty(`` ...), no framework entry that places a model
  (``.setup(``, ``.prepare(``, ``.fit(`` ..., ``Trainer``, ``Fabric``, ``accelerate``), no
  word naming a device or an accelerator in an identifier, keyword or string (``device``,
  ``cuda``, ``gpu``, ``accelerator``, ``mps``: this covers ``RunIf(min_cuda_gpus=1)``,
  ``@require_torch_gpu``, ``skipif(not torch.cuda.is_available())`` and device
  parametrisations), no ``global``, and no fixture parameter (only parametrised names and
  pytest's own ``tmp_path``-like fixtures), since a fixture can hand the test anything.

Words are only ever used to *withhold* the fact, never to claim a device. What this cannot
see: another file importing the class (a test module is collected by pytest, not imported, as a
rule) and a helper imported from elsewhere that moves what it is handed though nothing in the
test names a device.

One walk of the tree, done only for test files, on the first question.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Optional, Union

import libcst as cst

from devicelint.analysis.function_text import FunctionTexts
from devicelint.analysis.names import suite_statements

_TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
_IMPORTS_TEST_FRAMEWORK = re.compile(r"^\s*(import|from)\s+(pytest|unittest)\b", re.MULTILINE)
_CLASS_NAMES = re.compile(r"^\s*class\s+(\w+)", re.MULTILINE)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

#: words that name a device, an accelerator or what places a model on one
_PLACEMENT_WORDS = frozenset(
    {
        "cuda", "cudnn", "gpu", "gpus", "device", "devices", "accelerator", "accelerators", "accelerate",
        "mps", "xpu", "tpu", "npu", "hpu", "ipu", "trainer", "trainers",
    }
)  # fmt: skip
#: names of framework objects that place the model they are given (Lightning's Fabric)
_PLACING_NAMES = frozenset({"Fabric", "LightningLite"})
#: methods that move a module, or hand it to a framework that places it
_PLACING_METHODS = frozenset(
    {
        "to", "cuda", "xpu", "mps", "npu", "hpu", "ipu", "to_empty", "type", "setup", "setup_module",
        "prepare", "prepare_model", "fit", "validate", "test", "predict", "launch",
    }
)  # fmt: skip
#: pytest's own fixtures that hand a test no device or model (not ``request``: its
#: ``getfixturevalue`` fetches any fixture)
_BUILTIN_FIXTURES = frozenset({"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory", "monkeypatch", "capsys", "capfd", "caplog", "recwarn"})


@lru_cache(maxsize=4096)
def _names_placement(text: str) -> bool:
    """Does an identifier, keyword or string name a device or what places a model?"""
    return text in _PLACING_NAMES or any(word.lower() in _PLACEMENT_WORDS for word in _WORDS.findall(text))


def is_test_file(path: Optional[str], text: Optional[str]) -> bool:
    return path is not None and text is not None and bool(_TEST_FILE.match(os.path.basename(path))) and bool(_IMPORTS_TEST_FRAMEWORK.search(text))


_Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, None]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(eq=False)
class _Frame:
    node: _Scope
    parent: Optional["_Frame"]
    #: classes defined directly in this scope, by name (None where a name is defined twice)
    classes: dict[str, Optional[ast.ClassDef]] = field(default_factory=dict)
    #: something in the scope (or nested in it) may place a model
    places: bool = False
    #: names the scope (or a scope nested in it) calls
    called: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _Reference:
    name: str
    #: "call" (``C(...)``), "super" (``super(C, self)``), "base" (``class D(C)``) or "other"
    how: str
    #: the scopes around it, innermost first
    frames: tuple[_Frame, ...]


class _Walk:
    """One walk of Python's tree of the file: the scopes, the class definitions, every read of
    a class name of the file, and which scopes may place a model."""

    def __init__(self, class_names: frozenset[str]) -> None:
        self.class_names = class_names
        self.module = _Frame(None, None)
        self.references: list[_Reference] = []
        #: each class definition with the scope that defines it and its own frame, in source order
        self.definitions: dict[ast.ClassDef, tuple[_Frame, _Frame]] = {}
        self.functions: dict[str, Optional[_Frame]] = {}
        self._how: dict[int, str] = {}

    def walk(self, node: ast.AST, frame: _Frame) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return
        if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            self._scope(node, frame)
            return
        if isinstance(node, ast.Name):
            self._name(node, frame)
            return
        if isinstance(node, ast.Attribute):
            if _names_placement(node.attr):
                frame.places = True
        elif isinstance(node, ast.Call):
            self._call(node, frame)
        elif isinstance(node, ast.keyword):
            if node.arg is not None and _names_placement(node.arg):
                frame.places = True
        elif isinstance(node, ast.arg):
            if _names_placement(node.arg):
                frame.places = True
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and _names_placement(node.value):
                frame.places = True
        elif isinstance(node, ast.Global):
            frame.places = True  # the test hands something to the rest of the file
        for child in ast.iter_child_nodes(node):
            self.walk(child, frame)

    def _scope(self, node: Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef], parent: _Frame) -> None:
        frame = _Frame(node, parent)
        if _names_placement(node.name):
            frame.places = True
        if isinstance(node, ast.ClassDef):
            parent.classes[node.name] = None if node.name in parent.classes else node
            self.definitions[node] = (parent, frame)
            for base in node.bases:
                if isinstance(base, ast.Name):
                    self._how[id(base)] = "base"
        elif parent is self.module:
            self.functions[node.name] = None if node.name in self.functions else frame
        for child in ast.iter_child_nodes(node):
            self.walk(child, frame)
        parent.places |= frame.places
        parent.called |= frame.called

    def _call(self, node: ast.Call, frame: _Frame) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _PLACING_METHODS:
            frame.places = True
        elif isinstance(func, ast.Name):
            frame.called.add(func.id)
            if func.id in self.class_names:
                self._how[id(func)] = "call"
            elif func.id == "super" and node.args and isinstance(node.args[0], ast.Name):
                self._how[id(node.args[0])] = "super"

    def _name(self, node: ast.Name, frame: _Frame) -> None:
        if _names_placement(node.id):
            frame.places = True
        if node.id in self.class_names:
            frames = []
            scope: Optional[_Frame] = frame
            while scope is not None:
                frames.append(scope)
                scope = scope.parent
            self.references.append(_Reference(node.id, self._how.get(id(node), "other"), tuple(frames)))


def _defining_frame(reference: _Reference) -> Optional[_Frame]:
    """The scope whose class ``reference`` names, as Python resolves it: the innermost function
    (or the module) that defines it; a class body only for a name read directly in it."""
    for position, frame in enumerate(reference.frames):
        if isinstance(frame.node, ast.ClassDef) and position > 0:
            continue
        if reference.name in frame.classes:
            return frame
    return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""


def _parametrized_names(function: Union[ast.FunctionDef, ast.AsyncFunctionDef]) -> set[str]:
    names: set[str] = set()
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or not _dotted(decorator).endswith("parametrize") or not decorator.args:
            continue
        argnames = decorator.args[0]
        strings = argnames.elts if isinstance(argnames, (ast.Tuple, ast.List)) else [argnames]
        for string in strings:
            if isinstance(string, ast.Constant) and isinstance(string.value, str):
                names.update(part.strip() for part in string.value.split(","))
    return names


def _is_test_function(frame: _Frame, module: _Frame) -> bool:
    node = frame.node
    return (
        isinstance(node, _FUNCTIONS)
        and frame.parent is module
        and node.name.startswith("test")
        and not any("fixture" in _dotted(decorator) for decorator in node.decorator_list)
    )


class _Verdicts:
    def __init__(self, walk: _Walk) -> None:
        self.walk = walk
        self.references: dict[tuple[int, str], list[_Reference]] = {}
        for reference in walk.references:
            frame = _defining_frame(reference)
            if frame is not None:
                self.references.setdefault((id(frame), reference.name), []).append(reference)
        self._host: dict[ast.ClassDef, bool] = {}
        self._test_places: dict[int, bool] = {}

    def stays_on_host(self, node: ast.ClassDef) -> bool:
        known = self._host.get(node)
        if known is None:
            self._host[node] = False  # a cycle of classes building each other: not shown
            known = self._host[node] = self._decide(node)
        return known

    def _decide(self, node: ast.ClassDef) -> bool:
        scope, own = self.walk.definitions[node]
        if isinstance(scope.node, ast.ClassDef) or scope.classes.get(node.name) is not node:
            return False
        if not self._body_stays(node, set()):
            return False
        references = self.references.get((id(scope), node.name), [])
        if not any(reference.how == "call" for reference in references):
            return False
        for reference in references:
            if reference.how == "super" and own in reference.frames:
                continue
            if reference.how != "call" or not self._builds_on_host(reference, node):
                return False
        return True

    def _body_stays(self, node: ast.ClassDef, seen: set[int]) -> bool:
        """The class's body, and those of its bases of the file, place nothing."""
        if id(node) in seen:
            return True
        seen.add(id(node))
        scope, own = self.walk.definitions[node]
        if own.places:
            return False
        for base in node.bases:
            if isinstance(base, ast.Name):
                frame = _defining_frame(_Reference(base.id, "base", (scope, *_outer(scope))))
                base_node = frame.classes.get(base.id) if frame is not None else None
                if base_node is not None and not self._body_stays(base_node, seen):
                    return False
        return True

    def _builds_on_host(self, reference: _Reference, built: ast.ClassDef) -> bool:
        frames = reference.frames
        module = self.walk.module
        outermost = frames[-2] if len(frames) >= 2 else None
        if outermost is not None and _is_test_function(outermost, module):
            return not self._test_places_model(outermost)
        # built in a method of another module class of the file, which stays on the host itself
        if len(frames) >= 2 and isinstance(frames[0].node, _FUNCTIONS) and isinstance(frames[1].node, ast.ClassDef):
            owner = frames[1].node
            return owner is not built and self.stays_on_host(owner)
        return False

    def _test_places_model(self, test: _Frame) -> bool:
        known = self._test_places.get(id(test))
        if known is None:
            assert isinstance(test.node, _FUNCTIONS)
            allowed = _parametrized_names(test.node) | _BUILTIN_FIXTURES
            args = test.node.args
            fixtures = any(arg.arg not in allowed for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs])
            starred = args.vararg is not None or args.kwarg is not None
            known = test.places or fixtures or starred or self._helpers_place(test.called, set())
            self._test_places[id(test)] = known
        return known

    def _helpers_place(self, called: set[str], seen: set[str]) -> bool:
        """Does a function of the file that the test calls (or one they call) place anything?"""
        for name in called:
            if name in seen or name not in self.walk.functions:
                continue
            seen.add(name)
            helper = self.walk.functions[name]
            if helper is None or helper.places or self._helpers_place(helper.called, seen):
                return True
        return False


def _outer(frame: _Frame) -> tuple[_Frame, ...]:
    frames = []
    parent = frame.parent
    while parent is not None:
        frames.append(parent)
        parent = parent.parent
    return tuple(frames)


def _cst_classes(body: object) -> Iterator[cst.ClassDef]:
    """Classes defined in a sequence of statements, in source order (nested ones after their
    enclosing definition), as Python's tree lists them; found through the statements only."""
    for statement in body:  # type: ignore[attr-defined]
        if isinstance(statement, cst.ClassDef):
            yield statement
            yield from _cst_classes(suite_statements(statement.body))
        elif isinstance(statement, (cst.FunctionDef, cst.With)):
            yield from _cst_classes(suite_statements(statement.body))
        elif isinstance(statement, cst.If):
            yield from _cst_classes(suite_statements(statement.body))
            orelse = statement.orelse
            if orelse is not None:
                yield from _cst_classes([orelse] if isinstance(orelse, cst.If) else suite_statements(orelse.body))
        elif isinstance(statement, (cst.For, cst.While)):
            yield from _cst_classes(suite_statements(statement.body))
            if statement.orelse is not None:
                yield from _cst_classes(suite_statements(statement.orelse.body))
        elif isinstance(statement, (cst.Try, cst.TryStar)):
            yield from _cst_classes(suite_statements(statement.body))
            for handler in statement.handlers:
                yield from _cst_classes(suite_statements(handler.body))
            for tail in (statement.orelse, statement.finalbody):
                if tail is not None:
                    yield from _cst_classes(suite_statements(tail.body))
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                yield from _cst_classes(suite_statements(case.body))




class HostTestModules:
    """Answers "does every object of this module class stay on the host?" for one file. Only
    for test files, and on the first question: one walk of Python's tree of the file (shared
    with FunctionTexts), its classes paired with libcst's in source order."""

    def __init__(self, module: cst.Module, path: Optional[str], text: Optional[str], texts: Optional[FunctionTexts]) -> None:
        self._module = module
        self._texts = texts if is_test_file(path, text) else None
        self._text = text or ""
        self._verdicts: Optional[_Verdicts] = None
        self._paired: dict[cst.ClassDef, ast.ClassDef] = {}

    def stays_on_host(self, node: cst.ClassDef) -> bool:
        if self._texts is None:
            return False
        if self._verdicts is None:
            tree = self._texts.syntax_tree()
            walk = _Walk(frozenset(_CLASS_NAMES.findall(self._text)))
            if tree is not None:
                for statement in tree.body:
                    walk.walk(statement, walk.module)
            self._verdicts = _Verdicts(walk)
            ours = list(_cst_classes(self._module.body))
            theirs = list(walk.definitions)
            if len(ours) == len(theirs) and all(a.name.value == b.name for a, b in zip(ours, theirs)):
                self._paired = dict(zip(ours, theirs))
        paired = self._paired.get(node)
        return paired is not None and self._verdicts.stays_on_host(paired)
