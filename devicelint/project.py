"""The project around the linted files: where its modules are, and their parsed text.

Linting one file reads the modules of its project that it imports (``from .models import Net``,
``from utils import make_mask``, ``import pkg.losses as L``): the analysis runs their code
silently to learn what their classes and functions are (see
devicelint.analysis.project_imports). This module only finds and parses them:

* the project root of a file is the nearest folder above it holding ``pyproject.toml``,
  ``setup.py``, ``setup.cfg`` or ``.git``, else the common parent of the paths named on the
  command line (``fallback_root``), else the file's folder;
* an absolute import is looked up as Python would for a script or an installed project: in the
  importing file's folder, in the root, in ``root/src``; a relative import from the importing
  file's package; a name found in none of them is outside the project (site-packages, torch)
  and stays unknown. ``torch`` itself is never looked up (a local ``torch.py`` would otherwise
  turn off everything the analysis knows about PyTorch);
* a module is parsed with its function bodies left for when they are read
  (devicelint.deferred_bodies): most functions of an imported module are never called by the
  file that imports it;
* parsed modules are kept, least recently used first out, up to a number of characters, so
  memory stays bounded however big the project is. A module that cannot be read (deleted
  mid-run, undecodable) or parsed is simply not known: the importing file is linted as if the
  import were from outside the project.

A ``ProjectIndex`` lives for one batch of files (one process's chunk); ``ProjectView`` is one
linted file's window on it, and records every project file the analysis read, which the result
cache folds into the file's key.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

import libcst as cst

from devicelint.chunking import CHUNK_CHARACTERS
from devicelint.deferred_bodies import deferring_works, parse_deferring_bodies, python_syntax_tree
from devicelint.prefilter import may_use_pytorch
from devicelint.suppressions import skips_file

_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
#: top-level names never looked up in the project: what the analysis models itself
_NEVER_LOCAL = frozenset({"torch", "__future__"})
#: parsed modules kept per index, in characters of source (trees take ~30x that in memory)
DEFAULT_KEPT_CHARACTERS = 6_000_000
#: a module bigger than this is not read as a dependency (it would cost more than it tells)
MAX_DEPENDENCY_CHARACTERS = 400_000


@dataclass(eq=False)
class ParsedModule:
    path: Path
    text: str
    tree: cst.Module
    #: how messages name the file: relative to the project root when it is inside it
    display: str
    #: what the analysis made of the module (devicelint.analysis.project_imports), shared by
    #: the files of the batch that import it
    analysed: Optional[object] = None
    #: the text parsed by Python's ``ast`` too, when it was (devicelint.analysis.function_text
    #: uses it)
    syntax_tree: Optional[ast.Module] = None
    #: False while some function bodies of ``tree`` are not parsed (devicelint.deferred_bodies)
    complete: bool = True
    #: where the texts of ``tree``'s functions are cut (devicelint.analysis.function_text's
    #: ``FunctionTexts``), made when first asked: by the analysis of a file that imports the
    #: module, or by the module's own lint when its tree is this one. One for both, so the
    #: text is parsed by ``ast`` and its functions paired once, not once per side
    texts: Optional[object] = None


class ProjectIndex:
    """Finds and parses the modules of the projects the linted files belong to."""

    def __init__(
        self, fallback_root: Optional[Path] = None, kept_characters: int = DEFAULT_KEPT_CHARACTERS, batch: Iterable[Path] = ()
    ) -> None:
        """``batch``: the files this index's owner is going to lint. One of them read as a
        dependency first is parsed whole, not with its bodies deferred: its tree is then linted
        as it is (``tree_for``), rather than parsed a second time."""
        self.fallback_root = fallback_root.resolve() if fallback_root is not None else None
        self._batch = frozenset(filter(None, map(_real_path_or_none, batch)))
        self._kept_characters = kept_characters
        self._parsed: OrderedDict[Path, Optional[ParsedModule]] = OrderedDict()
        self._characters = 0
        self._roots: dict[Path, Path] = {}
        #: per (importer's folder, module, level): the file an import names (None: outside)
        self._resolved: dict[tuple[Path, Optional[str], int], Optional[Path]] = {}
        #: per file as named: its path with links resolved (Path.resolve stats every part)
        self._real_paths: dict[Path, Path] = {}
        #: per (folder, dotted parts): the module file there, if any (the root and root/src
        #: are searched for every importer's folder)
        self._module_files: dict[tuple[Path, tuple[str, ...]], Optional[Path]] = {}

    # ------------------------------------------------------------------ where things are

    def root_of(self, path: Path) -> Path:
        """The project root of the file at ``path`` (see the module docstring)."""
        folder = self._real_path(path).parent
        known = self._roots.get(folder)
        if known is not None:
            return known
        root = None
        for candidate in (folder, *folder.parents):
            if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
                root = candidate
                break
        if root is None:
            fallback = self.fallback_root
            root = fallback if fallback is not None and (fallback == folder or fallback in folder.parents) else folder
        self._roots[folder] = root
        return root

    def _real_path(self, path: Path) -> Path:
        real = self._real_paths.get(path)
        if real is None:
            real = self._real_paths[path] = path.resolve()
        return real

    def resolve(self, importer: Path, module: Optional[str], level: int) -> Optional[Path]:
        """The file of ``module`` imported from ``importer`` (``level`` dots for a relative
        import; ``module`` None for ``from . import x``), or None outside the project. A package
        resolves to its ``__init__.py``."""
        key = (importer.parent, module, level)  # only the importer's folder matters
        if key not in self._resolved:  # the same imports recur in every file of a package
            self._resolved[key] = self._find_module(importer, module, level)
        return self._resolved[key]

    def _find_module(self, importer: Path, module: Optional[str], level: int) -> Optional[Path]:
        folder = self._real_path(importer).parent
        parts = module.split(".") if module else []
        if level > 0:
            base = folder
            for _ in range(level - 1):
                base = base.parent
            return self._module_file(base, parts) if parts else _package_file(base)
        if not parts or parts[0] in _NEVER_LOCAL:
            return None
        root = self.root_of(importer)
        for candidate in _unique((folder, root, root / "src")):
            found = self._module_file(candidate, parts)
            if found is not None:
                return found
        return None

    def _module_file(self, folder: Path, parts: list[str]) -> Optional[Path]:
        key = (folder, tuple(parts))
        if key not in self._module_files:
            self._module_files[key] = _module_file(folder, parts)
        return self._module_files[key]

    def submodule(self, package_file: Path, name: str) -> Optional[Path]:
        """``pkg/name.py`` (or ``pkg/name/__init__.py``) for the ``__init__.py`` of ``pkg``."""
        if package_file.name != "__init__.py":
            return None
        # asked again for every name a package's __init__ does not bind, by every file that
        # uses one: the files are looked for once
        return self._module_file(package_file.parent, [name])

    # ------------------------------------------------------------------ reading

    def parsed(self, path: Path) -> Optional[ParsedModule]:
        """The module at ``path`` parsed, or None when it cannot be read or parsed."""
        if path in self._parsed:
            self._parsed.move_to_end(path)
            return self._parsed[path]
        parsed = self._parse(path)
        self._parsed[path] = parsed
        if parsed is not None:
            self._characters += len(parsed.text)
            self._evict()
        return parsed

    def _evict(self) -> None:
        while self._characters > self._kept_characters and len(self._parsed) > 1:
            _, dropped = self._parsed.popitem(last=False)
            if dropped is not None:
                self._characters -= len(dropped.text)
                # the module's analysis points back at it: break the cycle, so that reference
                # counting frees both (the collector may have frozen them, see the runner)
                dropped.analysed = None

    def _parse(self, path: Path) -> Optional[ParsedModule]:
        # imported lazily: devicelint.engine imports the analysis, which names this module
        from devicelint.engine import DecodeError, decode_source

        try:
            data = path.read_bytes()
        except OSError:
            return None
        if len(data) > MAX_DEPENDENCY_CHARACTERS:
            return None
        try:
            text = decode_source(data)
            # ast's tree, which finds the bodies to defer, is not made where nothing is deferred;
            # a file of the batch is parsed whole only where its tree is going to be linted
            defer = not (path in self._batch and _linted_whole(text)) and deferring_works()
            syntax = python_syntax_tree(text) if defer else None
            deferred = parse_deferring_bodies(text, syntax) if syntax is not None else None
            tree = deferred if deferred is not None else cst.parse_module(text)
        except (DecodeError, RecursionError):
            return None
        except Exception:  # noqa: BLE001 - a syntax error (or the native parser's odd failures) in a dependency
            return None
        root = self.root_of(path)
        try:
            display = str(path.relative_to(root))
        except ValueError:
            display = path.name
        return ParsedModule(path, text, tree, display, syntax_tree=syntax, complete=deferred is None)

    def tree_for(self, path: Path, text: str) -> Optional[cst.Module]:
        """The tree of a linted file already parsed as another file's dependency, if its text
        is the same (the file is then parsed once for both)."""
        parsed = self._parsed.get(path)
        # a tree with bodies still to parse is not linted: the rules walk all of it, and it
        # would be parsed piece by piece
        return parsed.tree if parsed is not None and parsed.complete and parsed.text == text else None

    def keep(self, path: Path, text: str, tree: cst.Module) -> bool:
        """Keep a linted file's tree for the files after it that import it (False: it is not
        kept, being too big or the index holding the file already)."""
        if path in self._parsed or len(text) > MAX_DEPENDENCY_CHARACTERS:
            return False
        root = self.root_of(path)
        try:
            display = str(path.relative_to(root))
        except ValueError:
            display = path.name
        self._parsed[path] = ParsedModule(path, text, tree, display)
        self._characters += len(text)
        self._evict()
        return True

    def view(self, path: str) -> Optional["ProjectView"]:
        """The window of the file at ``path`` (None for stdin or a path that is not a file)."""
        if path in ("-", "<stdin>"):
            return None
        file = Path(path)
        try:
            if not file.is_file():
                return None
            return ProjectView(self, file.resolve())
        except OSError:
            return None


@dataclass(eq=False)
class ProjectView:
    """One linted file's window on its project; ``reads`` are the project files its analysis
    read, in the order it read them."""

    index: ProjectIndex
    importer: Path
    reads: list[Path] = field(default_factory=list)
    #: ``reads`` as a set: a module is read again for every name of it the analysis resolves
    _read_set: set[Path] = field(default_factory=set)

    def resolve(self, importer: Path, module: Optional[str], level: int) -> Optional[Path]:
        return self.index.resolve(importer, module, level)

    def submodule(self, package_file: Path, name: str) -> Optional[Path]:
        return self.index.submodule(package_file, name)

    def tree_for(self, text: str) -> Optional[cst.Module]:
        return self.index.tree_for(self.importer, text)

    def keep(self, text: str, tree: cst.Module) -> bool:
        return self.index.keep(self.importer, text, tree)

    def kept(self, tree: cst.Module, text: str) -> Optional[ParsedModule]:
        """The linted file's entry in the index when ``tree`` (parsed from ``text``) is the
        tree it holds (``tree_for`` or ``keep`` gave it), else None (a piece of a big file)."""
        parsed = self.index._parsed.get(self.importer)
        return parsed if parsed is not None and parsed.tree is tree and parsed.text == text else None

    def linted(self) -> None:
        """The linted file's analysis is done: its function texts, kept for the files that
        import it, keep their cuts but not Python's tree of the text (parsed again if ever
        asked), so what the index holds per module stays about what it held before."""
        parsed = self.index._parsed.get(self.importer)
        texts = parsed.texts if parsed is not None else None
        if texts is not None and parsed is not None and parsed.syntax_tree is None:
            texts.drop_syntax_tree()  # type: ignore[attr-defined]

    def read(self, path: Path) -> Optional[ParsedModule]:
        if path == self.importer:
            return None  # a module importing itself (a cycle back to the linted file)
        if path not in self._read_set:
            self._read_set.add(path)
            self.reads.append(path)
        return self.index.parsed(path)


def _linted_whole(text: str) -> bool:
    """Whether linting a file with this text parses it whole (devicelint.engine._lint_source):
    one that never mentions PyTorch, asks to be skipped, or is linted piece by piece does not."""
    return len(text) <= CHUNK_CHARACTERS and may_use_pytorch(text) and not skips_file(text)


def _real_path_or_none(path: Path) -> Optional[Path]:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop of links
        return None


def _module_file(folder: Path, parts: list[str]) -> Optional[Path]:
    if not parts:
        return None
    target = folder.joinpath(*parts)
    single = target.with_name(target.name + ".py")
    if single.is_file():
        return single
    return _package_file(target)


def _package_file(folder: Path) -> Optional[Path]:
    init = folder / "__init__.py"
    return init if init.is_file() else None


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        if path not in seen:
            seen.append(path)
    return seen
