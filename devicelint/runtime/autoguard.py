"""Guard every model a block of code runs, without being handed the model (the pytest plugin's
``device_guard`` marker and ``--device-guard`` option).

A global forward pre-hook sees each module call; the first call of a module that no guard
covers yet is the outermost one of its model (a parent's hook fires before its children are
called), so a ``guard`` is installed on that module, with paths relative to it. The global hook
sees positional arguments only (shared/RUNTIME.md), which is why it only discovers models and
the per-module guard hooks do the checking. Everything is removed on exit.
"""

from __future__ import annotations

import weakref
from types import TracebackType
from typing import Any, Optional

from torch import nn
from torch.nn.modules.module import register_module_forward_pre_hook

from devicelint.findings import Finding
from devicelint.runtime.guard import guard


class GuardEveryModel:
    def __init__(self, *, on_mismatch: str = "raise", ops: bool = False) -> None:
        self.on_mismatch = on_mismatch
        self.ops = ops
        self.guards: list[guard] = []
        self._covered: "weakref.WeakSet[nn.Module]" = weakref.WeakSet()
        self._handle: Optional[Any] = None

    @property
    def findings(self) -> list[Finding]:
        return [finding for installed in self.guards for finding in installed.findings]

    def _discover(self, module: nn.Module, args: Any) -> None:
        if module in self._covered:
            return
        installed = guard(module, on_mismatch=self.on_mismatch, ops=self.ops)
        installed.__enter__()
        self.guards.append(installed)
        self._covered.update(module.modules())

    def __enter__(self) -> "GuardEveryModel":
        self._handle = register_module_forward_pre_hook(self._discover)
        return self

    def __exit__(
        self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException], traceback: Optional[TracebackType]
    ) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        for installed in self.guards:
            installed.remove()
