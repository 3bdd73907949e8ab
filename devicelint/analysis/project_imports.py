"""Imports of the linted file's own project, followed into the modules they name.

``from .models import Net`` binds ``Net`` to a reference into ``models.py`` (a ``ProjectRef``);
nothing is read until the name is used. When it is - called, subclassed, its attribute taken -
the module is read (devicelint.project parses it) and its body run silently, as the interpreter
runs the linted file's own body, in a module state of its own: its imports, classes, functions
and module-level values. What the name is bound to there is what the linted file gets: a class
(an ``nn.Module``? it owns parameters? a dataset?), a function whose calls are summarised on the
caller's arguments like the file's own helpers, a device chosen in ``config.py``, or a torch
name re-exported (``from torch.nn import CrossEntropyLoss as CE`` in ``losses.py``).

The code of another module runs with that module's state (``_running`` swaps it in for its
functions), with file facts of its own (what another module does never makes the linted file
"a CPU program"), and never emits events: findings are the linted file's only. Values made there
keep their origin nodes, which the engine places in the other file for messages ("line 12 of
utils.py").

Bounded: at most ``MAX_LOADED_MODULES`` modules per linted file, re-exports followed
``MAX_REEXPORT_HOPS`` deep, module bodies run at most ``MAX_LOAD_DEPTH`` deep (a module loaded
while another loads); a cycle sees the partial state, as Python's import system does.

``ProjectImports`` is a mixin of devicelint.analysis.flow.FlowAnalyzer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.facts import FileFacts
from devicelint.analysis.function_text import FunctionTexts, module_texts
from devicelint.analysis.names import dotted_name
from devicelint.analysis.state import State
from devicelint.analysis.values import Kind, Value

if TYPE_CHECKING:
    from devicelint.project import ParsedModule, ProjectView

MAX_LOADED_MODULES = 32
MAX_REEXPORT_HOPS = 6
MAX_LOAD_DEPTH = 4


@dataclass(frozen=True)
class ProjectRef:
    """``Value.info`` of a reference into the project: ``name`` bound in the module at
    ``path``, or the module itself when ``name`` is None."""

    path: Path
    name: Optional[str] = None


@dataclass(eq=False)
class ForeignModule:
    """Another module of the project, as the analysis of the linted file has run it."""

    parsed: "ParsedModule"
    state: State = field(default_factory=dict)
    facts: FileFacts = field(default_factory=FileFacts)
    #: the functions and methods defined in it (as far as its code has run)
    functions: list[cst.FunctionDef] = field(default_factory=list)
    #: the other project files read while its body ran (they shaped its state)
    reads: list[Path] = field(default_factory=list)
    #: per kind of fact, what the analysis worked out about its functions once (their body
    #: text, the parameters they use as tensors ...): shared by every file that imports it
    memo: dict[str, dict] = field(default_factory=dict)  # type: ignore[type-arg]
    #: texts of its functions, cut from its source (see devicelint.analysis.function_text)
    texts: Optional[FunctionTexts] = None

    @property
    def display(self) -> str:
        return self.parsed.display


def _modelled_library_name(qualname: str) -> bool:
    """A name whose meaning the analysis models itself (devicelint.analysis.torch_api)."""
    return (
        api.is_module_base(qualname)
        or api.is_framework_module_base(qualname)
        or qualname in api.DATASET_BASES
        or qualname in api.MODEL_FACTORIES
        or qualname.startswith(api.TORCHVISION_MODELS)
    )


class ProjectImports:
    """Binding and resolving imports of the project's own modules (mixed into FlowAnalyzer)."""

    project: Optional["ProjectView"]
    module_state: State
    facts: FileFacts
    emitting: bool
    _own_texts: Optional[FunctionTexts]

    def _init_project_imports(self, project: Optional["ProjectView"]) -> None:
        self.project = project
        #: modules of the project read for this file, by path (None: could not be read)
        self._foreign_modules: dict[Path, Optional[ForeignModule]] = {}
        #: functions (and methods) defined in another module: the module they run in
        self._foreign_home: dict[cst.FunctionDef, ForeignModule] = {}
        #: the other module whose code is running now, if any
        self._current_home: Optional[ForeignModule] = None
        self._loading_depth = 0

    # ------------------------------------------------------------------ binding imports

    def project_import_from(self, node: cst.ImportFrom, state: State) -> bool:
        """Bind the names of ``from X import a, b`` when X is a module of the project; False
        when it is not (the caller binds them as before)."""
        if self.project is None or isinstance(node.names, cst.ImportStar):
            return False
        module_name = dotted_name(node.module) if node.module is not None else None
        if node.module is not None and module_name is None:
            return False
        level = len(node.relative)
        importer = self._importer_path()
        target = self.project.resolve(importer, module_name, level)
        if target is None:
            return False
        prefix = ("." * level) + (module_name or "")
        for alias in node.names:
            name = dotted_name(alias.name) or ""
            bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            state[bound] = Value(Kind.REF, qualname=f"{prefix}.{name}" if prefix else name, info=ProjectRef(target, name))
        return True

    def project_import(self, alias: cst.ImportAlias, state: State) -> bool:
        """One name of ``import pkg.models as M`` / ``import utils, torch``, bound when it is a
        module of the project; False when it is not (the caller binds it as before)."""
        if self.project is None:
            return False
        full = dotted_name(alias.name) or ""
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound, name = alias.asname.name.value, full
        else:
            bound = name = full.split(".")[0]
        target = self.project.resolve(self._importer_path(), name, 0)
        if target is None:
            return False
        state[bound] = Value(Kind.REF, qualname=name, info=ProjectRef(target))
        return True

    def _importer_path(self) -> Path:
        home = self._current_home
        assert self.project is not None
        return home.parsed.path if home is not None else self.project.importer

    # ------------------------------------------------------------------ resolving references

    def project_member(self, base: Value, attribute: str) -> Optional[Value]:
        """``M.Net`` where ``M`` refers to a module of the project: what ``Net`` is there
        (None when ``base`` is no such module)."""
        ref = base.info
        if base.kind != Kind.REF or not isinstance(ref, ProjectRef) or ref.name is not None:
            return None
        return self.resolve_project_ref(Value(Kind.REF, qualname=f"{base.qualname}.{attribute}", info=ProjectRef(ref.path, attribute)))

    def resolve_project_ref(self, value: Value) -> Value:
        """What a reference into the project is bound to in its module: a class, a function, a
        module-level value, a torch name it re-exports; a module stays a reference. A name the
        module does not bind visibly (a star import) becomes an opaque reference, as a name
        from outside the project."""
        for _ in range(MAX_REEXPORT_HOPS):
            ref = value.info
            if value.kind != Kind.REF or not isinstance(ref, ProjectRef) or ref.name is None:
                return value
            if value.qualname is not None and _modelled_library_name(value.qualname):
                # linting timm or lightning themselves: `timm.create_model`, `LightningModule`
                # keep what the analysis knows of them rather than what their code shows
                return Value(Kind.REF, qualname=value.qualname)
            module = self._foreign_module(ref.path)
            member = module.state.get(ref.name) if module is not None else None
            if member is None:
                submodule = self.project.submodule(ref.path, ref.name) if self.project is not None else None
                if submodule is not None:
                    return Value(Kind.REF, qualname=value.qualname, info=ProjectRef(submodule))
                return Value(Kind.REF, qualname=value.qualname)
            value = member
        return value if not isinstance(value.info, ProjectRef) else Value(Kind.REF, qualname=value.qualname)

    def _foreign_module(self, path: Path) -> Optional[ForeignModule]:
        if path in self._foreign_modules:
            return self._foreign_modules[path]
        if self.project is None or len(self._foreign_modules) >= MAX_LOADED_MODULES or self._loading_depth >= MAX_LOAD_DEPTH:
            return None
        parsed = self.project.read(path)
        if parsed is None:
            self._foreign_modules[path] = None
            return None
        if isinstance(parsed.analysed, ForeignModule):
            # run already for another file of the batch: its state does not depend on who
            # imports it (but for chains deeper than MAX_LOAD_DEPTH and import cycles)
            module = parsed.analysed
            self._foreign_modules[path] = module
            for function in module.functions:
                self._foreign_home[function] = module
            for read in module.reads:
                self.project.read(read)  # the file's findings depend on them too (cache key)
            return module
        module = ForeignModule(parsed)
        # registered before its body runs: a cycle back to it sees the partial state
        self._foreign_modules[path] = module
        before = len(self.project.reads)
        self._run_foreign_body(module)
        module.reads = self.project.reads[before:]
        parsed.analysed = module
        return module

    def _run_foreign_body(self, module: ForeignModule) -> None:
        saved = (self.module_state, self.facts, self.emitting, self._current_home)
        self.module_state, self.facts, self.emitting, self._current_home = module.state, module.facts, False, module
        self._loading_depth += 1
        try:
            self.exec_block(module.parsed.tree.body, module.state)  # type: ignore[attr-defined]
        except RecursionError:
            pass  # what was bound before stays known
        except Exception:  # noqa: BLE001 - another module's odd code must not stop this file's analysis
            pass
        finally:
            self._loading_depth -= 1
            self.module_state, self.facts, self.emitting, self._current_home = saved

    def note_definition(self, function: cst.FunctionDef) -> None:
        """A function or method defined while another module's code runs belongs there."""
        home = self._current_home
        if home is not None and function not in self._foreign_home:
            self._foreign_home[function] = home
            home.functions.append(function)

    def home_state(self, function: cst.FunctionDef) -> State:
        """The module state a function's free names resolve in."""
        home = self._foreign_home.get(function)
        return home.state if home is not None else self.module_state

    def foreign_home(self, function: Optional[cst.FunctionDef]) -> Optional[ForeignModule]:
        """The other module of the project a function is defined in (None: the linted file)."""
        return self._foreign_home.get(function) if function is not None else None

    def function_texts(self, function: cst.FunctionDef) -> Optional[FunctionTexts]:
        """Where the text of ``function`` is cut from: its home module's, or the linted file's."""
        home = self._foreign_home.get(function)
        if home is None:
            return self._own_texts
        if home.texts is None:
            home.texts = module_texts(home.parsed)
        return home.texts

    def function_memo(self, function: cst.FunctionDef, own: dict, kind: str) -> dict:  # type: ignore[type-arg]
        """Where facts about ``function`` are kept: ``own`` (the analysis's) for the linted
        file's functions, the home module's memo for another module's, computed once per batch."""
        home = self._foreign_home.get(function)
        return own if home is None else home.memo.setdefault(kind, {})

    def foreign_modules(self) -> list[ForeignModule]:
        """The other modules of the project read for this file."""
        return [module for module in self._foreign_modules.values() if module is not None]

    def entering(self, function: cst.FunctionDef) -> Optional[tuple]:
        """Swap in the home of another module's function (see ``_running``); the saved state
        to hand to ``leaving``, or None for the linted file's own functions."""
        home = self._foreign_home.get(function)
        if home is None or home is self._current_home:
            return None
        saved = (self.module_state, self.facts, self._current_home)
        self.module_state, self.facts, self._current_home = home.state, home.facts, home
        return saved

    def leaving(self, saved: Optional[tuple]) -> None:
        if saved is not None:
            self.module_state, self.facts, self._current_home = saved

