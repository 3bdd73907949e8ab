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

import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional, Union

import libcst as cst

from devicelint.analysis.names import dotted_name

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
#: pytest's own fixtures: none of them hands a test a device or a model
_BUILTIN_FIXTURES = frozenset(
    {"tmp_path", "tmpdir", "tmp_path_factory", "tmpdir_factory", "monkeypatch", "capsys", "capfd", "caplog", "recwarn", "request"}
)


@lru_cache(maxsize=4096)
def _names_placement(text: str) -> bool:
    """Does an identifier, keyword or string name a device or what places a model?"""
    return text in _PLACING_NAMES or any(word.lower() in _PLACEMENT_WORDS for word in _WORDS.findall(text))


def is_test_file(path: Optional[str], text: Optional[str]) -> bool:
    return path is not None and text is not None and bool(_TEST_FILE.match(os.path.basename(path))) and bool(_IMPORTS_TEST_FRAMEWORK.search(text))


@dataclass(eq=False)
class _Frame:
    node: Union[cst.FunctionDef, cst.ClassDef, None]
    parent: Optional["_Frame"]
    #: classes defined directly in this scope, by name (None where a name is defined twice)
    classes: dict[str, Optional[cst.ClassDef]] = field(default_factory=dict)
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


class _Walk(cst.CSTVisitor):
    def __init__(self, class_names: frozenset[str]) -> None:
        self.class_names = class_names
        self.module = _Frame(None, None)
        self.frame = self.module
        self.references: list[_Reference] = []
        #: each class definition with the scope that defines it and its own frame
        self.definitions: dict[cst.ClassDef, tuple[_Frame, _Frame]] = {}
        self.functions: dict[str, Optional[_Frame]] = {}
        #: Name nodes that are not reads (definitions, attributes, keywords) or read in a known way
        self._not_read: set[int] = set()
        self._how: dict[int, str] = {}

    # ------------------------------------------------------------------ scopes

    def _enter(self, node: Union[cst.FunctionDef, cst.ClassDef]) -> None:
        self._not_read.add(id(node.name))
        frame = _Frame(node, self.frame)
        if isinstance(node, cst.ClassDef):
            defined = self.frame.classes
            defined[node.name.value] = None if node.name.value in defined else node
            self.definitions[node] = (self.frame, frame)
            for base in node.bases:
                if isinstance(base.value, cst.Name):
                    self._how[id(base.value)] = "base"
        elif self.frame is self.module:
            self.functions[node.name.value] = None if node.name.value in self.functions else frame
        self.frame = frame

    def _leave(self) -> None:
        frame = self.frame
        assert frame.parent is not None
        self.frame = frame.parent
        self.frame.places |= frame.places
        self.frame.called |= frame.called

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._enter(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._leave()

    # ------------------------------------------------------------------ what is read

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> None:
        self.frame.places = True  # the test hands something to the rest of the file

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_read.add(id(node.attr))
        if _names_placement(node.attr.value):
            self.frame.places = True

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_read.add(id(node.keyword))
            if _names_placement(node.keyword.value):
                self.frame.places = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _PLACING_METHODS:
            self.frame.places = True
        elif isinstance(func, cst.Name):
            self.frame.called.add(func.value)
            if func.value in self.class_names:
                self._how[id(func)] = "call"
            elif func.value == "super" and node.args and isinstance(node.args[0].value, cst.Name):
                self._how[id(node.args[0].value)] = "super"

    def visit_Name(self, node: cst.Name) -> None:
        if _names_placement(node.value):
            self.frame.places = True
        if node.value in self.class_names and id(node) not in self._not_read:
            frames = []
            frame: Optional[_Frame] = self.frame
            while frame is not None:
                frames.append(frame)
                frame = frame.parent
            self.references.append(_Reference(node.value, self._how.get(id(node), "other"), tuple(frames)))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if _names_placement(node.value):
            self.frame.places = True

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        if _names_placement(node.value):
            self.frame.places = True


def _defining_frame(reference: _Reference) -> Optional[_Frame]:
    """The scope whose class ``reference`` names, as Python resolves it: the innermost function
    (or the module) that defines it; a class body only for a name read directly in it."""
    for position, frame in enumerate(reference.frames):
        if isinstance(frame.node, cst.ClassDef) and position > 0:
            continue
        if reference.name in frame.classes:
            return frame
    return None


def _parametrized_names(function: cst.FunctionDef) -> set[str]:
    names: set[str] = set()
    for decorator in function.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or not (dotted_name(call.func) or "").endswith("parametrize") or not call.args:
            continue
        argnames = call.args[0].value
        strings = [argnames] if isinstance(argnames, cst.SimpleString) else [element.value for element in getattr(argnames, "elements", ())]
        for string in strings:
            if isinstance(string, cst.SimpleString):
                names.update(part.strip() for part in str(string.evaluated_value).split(","))
    return names


def _is_test_function(frame: _Frame, module: _Frame) -> bool:
    node = frame.node
    return (
        isinstance(node, cst.FunctionDef)
        and frame.parent is module
        and node.name.value.startswith("test")
        and not any("fixture" in (dotted_name(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "") for d in node.decorators)
    )


class _Verdicts:
    def __init__(self, walk: _Walk) -> None:
        self.walk = walk
        self.references: dict[tuple[int, str], list[_Reference]] = {}
        for reference in walk.references:
            frame = _defining_frame(reference)
            if frame is not None:
                self.references.setdefault((id(frame), reference.name), []).append(reference)
        self._host: dict[cst.ClassDef, bool] = {}
        self._test_places: dict[int, bool] = {}

    def stays_on_host(self, node: cst.ClassDef) -> bool:
        known = self._host.get(node)
        if known is None:
            self._host[node] = False  # a cycle of classes building each other: not shown
            known = self._host[node] = self._decide(node)
        return known

    def _decide(self, node: cst.ClassDef) -> bool:
        scope, own = self.walk.definitions[node]
        if isinstance(scope.node, cst.ClassDef) or scope.classes.get(node.name.value) is not node:
            return False
        if not self._body_stays(node, set()):
            return False
        references = self.references.get((id(scope), node.name.value), [])
        if not any(reference.how == "call" for reference in references):
            return False
        for reference in references:
            if reference.how == "super" and own in reference.frames:
                continue
            if reference.how != "call" or not self._builds_on_host(reference, node):
                return False
        return True

    def _body_stays(self, node: cst.ClassDef, seen: set[int]) -> bool:
        """The class's body, and those of its bases of the file, place nothing."""
        if id(node) in seen:
            return True
        seen.add(id(node))
        scope, own = self.walk.definitions[node]
        if own.places:
            return False
        for base in node.bases:
            if isinstance(base.value, cst.Name):
                frame = _defining_frame(_Reference(base.value.value, "base", (scope, *_outer(scope))))
                base_node = frame.classes.get(base.value.value) if frame is not None else None
                if base_node is not None and not self._body_stays(base_node, seen):
                    return False
        return True

    def _builds_on_host(self, reference: _Reference, built: cst.ClassDef) -> bool:
        frames = reference.frames
        module = self.walk.module
        outermost = frames[-2] if len(frames) >= 2 else None
        if outermost is not None and _is_test_function(outermost, module):
            return not self._test_places_model(outermost)
        # built in a method of another module class of the file, which stays on the host itself
        if len(frames) >= 2 and isinstance(frames[0].node, cst.FunctionDef) and isinstance(frames[1].node, cst.ClassDef):
            owner = frames[1].node
            return owner is not built and owner in self.walk.definitions and self.stays_on_host(owner)
        return False

    def _test_places_model(self, test: _Frame) -> bool:
        known = self._test_places.get(id(test))
        if known is None:
            assert isinstance(test.node, cst.FunctionDef)
            allowed = _parametrized_names(test.node) | _BUILTIN_FIXTURES
            params = test.node.params
            fixtures = any(param.name.value not in allowed for param in [*params.posonly_params, *params.params, *params.kwonly_params])
            starred = isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None
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


class HostTestModules:
    """Answers "does every instance of this class stay on the host?" for one file; walks the
    tree once, on the first question, and only for test files."""

    def __init__(self, module: cst.Module, path: Optional[str], text: Optional[str]) -> None:
        self._module = module
        self._applies = is_test_file(path, text)
        self._text = text
        self._verdicts: Optional[_Verdicts] = None

    def stays_on_host(self, node: cst.ClassDef) -> bool:
        if not self._applies:
            return False
        if self._verdicts is None:
            assert self._text is not None
            walk = _Walk(frozenset(_CLASS_NAMES.findall(self._text)))
            self._module.visit(walk)
            self._verdicts = _Verdicts(walk)
        if node not in self._verdicts.walk.definitions:
            return False  # a class of another module of the project
        return self._verdicts.stays_on_host(node)
