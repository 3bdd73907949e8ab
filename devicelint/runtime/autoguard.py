"""Guard every model a block of code runs, without being handed the model (the pytest plugin's
``device_guard`` marker and ``--device-guard`` option).

A global forward pre-hook sees each module call; the first call of a module that no guard
covers yet is the outermost one of its model (a parent's hook fires before its children are
called), so a ``guard`` is installed on that module, with paths relative to it.

That first call must be checked too: in most unit tests it is the only one. Its children are
(their hooks are registered before they are called), but torch has already listed the root's
own pre-hooks for this call when the global hook runs, so the hooks the new guard put on the
root (its device check, and with ``ops=True`` the push of the op-level mode) are run here, for
this same call, as torch would have run them. The global hook is given positional arguments
only (shared/RUNTIME.md); the keyword arguments of this one call are read from torch's calling
frame, and where that frame is not what this torch version looks like, only the positional
arguments are checked at the root (its submodules and the op-level checks still see all).
Everything is removed on exit.
"""

from __future__ import annotations

import sys
import weakref
from types import TracebackType
from typing import Any, Optional

import torch
from torch import nn
from torch.nn.modules.module import register_module_forward_pre_hook

from devicelint.findings import Finding
from devicelint.runtime.guard import guard

_MODULE_SOURCE = sys.modules[nn.Module.__module__].__file__


def _keyword_arguments(module: nn.Module) -> dict[str, Any]:
    """The keyword arguments of the module call whose global pre-hooks are running: a local of
    ``Module._call_impl``'s inner function, two frames up (this function, ``_discover``)."""
    frame = sys._getframe(2)
    if frame.f_code.co_filename != _MODULE_SOURCE:
        return {}
    local_values = frame.f_locals
    kwargs = local_values.get("kwargs")
    if local_values.get("self") is module and isinstance(kwargs, dict):
        return kwargs
    return {}


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

    def _discover(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        if module in self._covered or torch.compiler.is_compiling():
            return
        existing = set(module._forward_pre_hooks)
        installed = guard(module, on_mismatch=self.on_mismatch, ops=self.ops)
        installed.__enter__()
        self.guards.append(installed)
        self._covered.update(module.modules())
        added = [hook_id for hook_id in module._forward_pre_hooks if hook_id not in existing]
        kwargs = _keyword_arguments(module) if added else {}
        # a guard's hooks return something only when it repairs inputs (simulation), never here
        for hook_id in added:
            hook = module._forward_pre_hooks[hook_id]
            if hook_id in module._forward_pre_hooks_with_kwargs:
                hook(module, args, kwargs)
            else:
                hook(module, args)

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
