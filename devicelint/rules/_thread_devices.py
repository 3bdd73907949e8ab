"""An index-less CUDA device used in a thread of a program that selects its GPU with
``torch.cuda.set_device``.

CUDA's current device belongs to the calling thread: ``torch.cuda.set_device(i)`` in the main
thread leaves every other thread - a ``ThreadPoolExecutor``'s workers, a
``threading.Thread`` - on GPU 0, and ``torch.device("cuda")`` (or ``"cuda"``), which means "the
current GPU" when a tensor is placed with it, resolves to GPU 0 there. A program that selects
GPU 1 and prefetches its batches in a thread moves them to GPU 0 while its model is on GPU 1.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name, last_identifier, string_value
from devicelint.analysis.values import Kind

#: calls that make a thread run a function: (the callable's keyword, its position)
_THREAD_STARTERS = {"threading.Thread": ("target", 1), "threading.Timer": ("function", 1)}
#: methods of an executor that run a function in its threads (the function comes first)
_EXECUTOR_METHODS = frozenset({"submit", "map"})
#: selectors whose choice holds for the calling thread only
_THREAD_SELECTORS = frozenset({"torch.cuda.set_device"})


def _index_less_cuda(node: Optional[cst.CSTNode]) -> bool:
    """``torch.device("cuda")`` or the literal ``"cuda"``."""
    if isinstance(node, cst.SimpleString):
        try:
            return string_value(node) == "cuda"
        except Exception:  # noqa: BLE001 - a malformed literal is not a device
            return False
    if isinstance(node, cst.Call) and dotted_name(node.func) in ("torch.device", "device") and len(node.args) == 1:
        return node.args[0].keyword is None and _index_less_cuda(node.args[0].value)
    return False


class ThreadDevices:
    """Collects, as the analysis runs, the GPU selections, the functions handed to threads and
    the placements with an index-less CUDA device per function; ``found()`` pairs them."""

    def __init__(self, source: str) -> None:
        #: the file can select a GPU at all: otherwise nothing is collected (a text search per file)
        self.enabled = "set_device" in source
        self.selected: Optional[cst.Call] = None
        self.thread_functions: dict[str, cst.Call] = {}
        #: (function name, the device's expression where it was made, the placing call)
        self.placements: list[tuple[str, cst.CSTNode, cst.Call]] = []

    def on_call(self, event: CallEvent, function: Optional[cst.FunctionDef]) -> None:
        if not self.enabled:
            return
        if event.qualname in _THREAD_SELECTORS:
            args = [arg for arg, _ in event.args if arg.keyword is None]
            if args and not (isinstance(args[0].value, cst.Integer) and args[0].value.value == "0"):
                self.selected = self.selected or event.node
            return
        if event.qualname in _THREAD_STARTERS:
            keyword, position = _THREAD_STARTERS[event.qualname]
            for index, (arg, _) in enumerate(event.args):
                if (arg.keyword is not None and arg.keyword.value == keyword) or (arg.keyword is None and index == position):
                    name = last_identifier(arg.value)
                    if name is not None:
                        self.thread_functions.setdefault(name, event.node)
            return
        if event.method in _EXECUTOR_METHODS and event.receiver is not None and event.args:
            origin = event.receiver.origin.node if event.receiver.origin is not None else None
            built_by = dotted_name(origin.func) if isinstance(origin, cst.Call) else None
            if built_by is not None and built_by.rsplit(".", 1)[-1] == "ThreadPoolExecutor":
                first = event.args[0][0]
                name = last_identifier(first.value) if first.keyword is None else None
                if name is not None:
                    self.thread_functions.setdefault(name, event.node)
            return
        if function is None:
            return
        for arg, value in event.args:
            placing = (arg.keyword is None and event.method in ("to", "cuda")) or (arg.keyword is not None and arg.keyword.value == "device")
            if not placing or value.kind != Kind.DEVICE and value.kind != Kind.STR:
                continue
            made = arg.value if _index_less_cuda(arg.value) else (value.origin.node if value.origin is not None else None)
            if _index_less_cuda(made):
                assert made is not None
                self.placements.append((function.name.value, made, event.node))

    def found(self) -> list[tuple[cst.CSTNode, str, cst.Call, cst.Call]]:
        """(the device's expression, the thread's function, the call that starts it, the
        selection) for each index-less CUDA device a thread's function places with."""
        if self.selected is None or not self.thread_functions:
            return []
        reported: dict[int, tuple[cst.CSTNode, str, cst.Call, cst.Call]] = {}
        for name, made, _ in self.placements:
            if name in self.thread_functions and id(made) not in reported:
                reported[id(made)] = (made, name, self.thread_functions[name], self.selected)
        return list(reported.values())
