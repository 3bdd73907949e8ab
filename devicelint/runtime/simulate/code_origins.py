"""Source files of the functions that travel to the simulation process by value.

cloudpickle pickles the functions and classes of ``__main__``, a notebook or a test's local
scope by value, and since cloudpickle 3.1.3 it renames their code's file to ``<dynamic-code>``
(to make its payload deterministic). A finding inside such a function would then point at
``<dynamic-code>`` instead of the user's file. The parent records where each function's code
came from before pickling (:func:`code_files`); the simulation process gives the code its file
back after unpickling (:func:`restore_code_files`), before anything runs.

Standard library only: the parent process imports no torch.
"""

from __future__ import annotations

import types
from typing import Any, Optional

#: what cloudpickle (>= 3.1.3) writes as the file of code it pickled by value
DYNAMIC_CODE = "<dynamic-code>"
#: objects looked at, at most, on either side: a payload is a model and its inputs, not a heap
_WALK_LIMIT = 20_000

CodeKey = tuple[str, int]


def code_files(payload: Any) -> dict[CodeKey, str]:
    """(code name, first line) -> source file, for the code of every function the payload
    reaches (also nested code: closures, lambdas, comprehensions). A key two files share maps
    to nothing (it could not be told apart)."""
    files: dict[CodeKey, Optional[str]] = {}
    for function in _functions(payload):
        _record(function.__code__, files)
    return {key: file for key, file in files.items() if file is not None}


def restore_code_files(payload: Any, files: dict[CodeKey, str]) -> None:
    """Give the functions the payload reaches, renamed ``<dynamic-code>`` by the pickler, the
    files ``code_files`` recorded for them."""
    if not files:
        return
    for function in _functions(payload):
        if function.__code__.co_filename == DYNAMIC_CODE:
            function.__code__ = _retargeted(function.__code__, files)


def _record(code: types.CodeType, files: dict[CodeKey, Optional[str]]) -> None:
    if code.co_filename != DYNAMIC_CODE:  # a file, or a pseudo-file such as "<notebook cell 3>"
        key = (code.co_name, code.co_firstlineno)
        if files.get(key, code.co_filename) != code.co_filename:
            files[key] = None  # two files, one key: ambiguous
        elif key not in files:
            files[key] = code.co_filename
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            _record(constant, files)


def _retargeted(code: types.CodeType, files: dict[CodeKey, str]) -> types.CodeType:
    constants = tuple(_retargeted(c, files) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    changes: dict[str, Any] = {}
    if any(new is not old for new, old in zip(constants, code.co_consts)):
        changes["co_consts"] = constants  # (code objects compare equal whatever their file)
    if code.co_filename == DYNAMIC_CODE:
        file = files.get((code.co_name, code.co_firstlineno))
        if file is not None:
            changes["co_filename"] = file
    return code.replace(**changes) if changes else code


def _functions(root: Any) -> list[types.FunctionType]:
    """The Python functions reachable from ``root``: itself, container items, objects'
    attributes, the methods of their classes (not torch's or the standard library's, which
    are never pickled by value), closures."""
    found: list[types.FunctionType] = []
    seen: set[int] = set()
    stack = [root]
    while stack and len(seen) < _WALK_LIMIT:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, types.FunctionType):
            found.append(obj)
            stack.extend(cell.cell_contents for cell in obj.__closure__ or () if _filled(cell))
        elif isinstance(obj, types.MethodType):
            stack += [obj.__func__, obj.__self__]
        elif isinstance(obj, (staticmethod, classmethod)):
            stack.append(obj.__func__)
        elif isinstance(obj, property):
            stack += [obj.fget, obj.fset, obj.fdel]
        elif isinstance(obj, type):
            if _maybe_by_value(obj):
                for klass in obj.__mro__:
                    if _maybe_by_value(klass):
                        stack.extend(vars(klass).values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif obj is not None and not isinstance(obj, (str, bytes, int, float, complex, bool)):
            stack.append(type(obj))
            attributes = getattr(obj, "__dict__", None)
            if isinstance(attributes, dict):
                stack.extend(attributes.values())
    return found


def _maybe_by_value(klass: type) -> bool:
    module = getattr(klass, "__module__", "") or ""
    return module != "builtins" and not module.startswith(("torch", "devicelint", "typing", "collections", "abc"))


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell: the variable was not bound yet
        return False
    return True
