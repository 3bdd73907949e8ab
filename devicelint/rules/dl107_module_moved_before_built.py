from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.values import Kind, Role, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_MOVES = frozenset({"to", "cuda", "xpu", "mps"})
#: nn.Module methods that register a submodule, parameter or buffer under a name
_REGISTERING = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})


@dataclass
class _Creation:
    node: cst.CSTNode
    #: how the finding names it: `self.fc`, `buffer "mask"`
    what: str


@dataclass
class _Move:
    node: cst.Call
    class_info: ClassInfo
    #: in __init__ order after the move: things created there, and names of helper methods called
    after: list[Union[_Creation, str]] = field(default_factory=list)


class ModuleMovedBeforeBuilt(Rule):
    """
    ## What it does
    Flags `self.to(device)` / `self.cuda()` inside an `nn.Module`'s `__init__` that runs before
    the module has all its parts: after the move, the same `__init__` (or a method of the class
    it calls after the move) creates a submodule with parameters (`self.fc = nn.Linear(...)`, a
    module class of the file that owns parameters), an `nn.Parameter`, or registers a buffer
    (`register_buffer`, `register_parameter`, `add_module`) made without `device=`. The finding
    sits on the move and names the first thing created after it.

    Left alone: parts created with `device=` or moved themselves, parameter-free modules
    (`nn.ReLU()`), plain tensor attributes (DL103's), Lightning-style modules the framework
    places, and classes whose instances the file moves after building them (`Net().to(device)`
    or `model.cuda()` moves everything again). A move to the CPU or to a dtype is not a
    placement on an accelerator. No fix: the move belongs after the last part is built, and
    moving statements is the author's call.

    ## Why is this bad?
    `Module.to()` / `.cuda()` move the parameters and buffers that exist when they run. Parts
    created afterwards stay on the CPU, so the first forward on a GPU raises "Expected all
    tensors to be on the same device" or "Input type (torch.cuda.FloatTensor) and weight type
    (torch.FloatTensor) should be the same".

    ## Example
    ```python
    class Net(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.encoder = nn.Linear(64, 32)
            self.to(device)
            self.head = nn.Linear(32, 10)      # stays on the CPU
    ```

    ## Use instead
    ```python
    class Net(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.encoder = nn.Linear(64, 32)
            self.head = nn.Linear(32, 10)
            self.to(device)                    # after the last part
    ```
    """

    code = "DL107"
    name = "module-moved-before-built"
    severity = Severity.ERROR
    summary = "`self.to(device)` / `self.cuda()` in `__init__` before submodules or parameters are created: they stay on the CPU."
    valid = (
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.fc = nn.Linear(4, 2)\n        self.to(device)\n",
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
        "        self.to(device)\n        self.fc = nn.Linear(4, 2, device=device)\n        self.act = nn.ReLU()\n",
        # the instance is moved again after it is built
        "from torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.cuda()\n        self.fc = nn.Linear(4, 2)\nmodel = Net().cuda()\n",
        # a dtype, not a device
        "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.to(torch.float16)\n        self.fc = nn.Linear(4, 2)\n",
    )
    invalid = (
        Example(
            "from torch import nn\nclass Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
            "        self.encoder = nn.Linear(64, 32)\n        self.to(device)  # expect: DL107\n        self.head = nn.Linear(32, 10)\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.cuda()  # expect: DL107\n        self.build()\n    def build(self):\n"
            "        self.scale = nn.Parameter(torch.ones(8))\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self, device):\n        super().__init__()\n"
            "        self.fc = nn.Linear(8, 8)\n        self.to(device)  # expect: DL107\n"
            "        self.register_buffer('mask', torch.tril(torch.ones(8, 8)))\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: per __init__ node: its first move of `self` onto a device
        self._moves: dict[int, _Move] = {}
        #: per (class, method name): what that method creates
        self._created_in: dict[tuple[int, str], list[_Creation]] = {}
        #: classes whose instances the file moves after building them
        self._moved_instances: set[int] = set()

    # ------------------------------------------------------------------ events

    def on_call(self, event: CallEvent) -> None:
        context = self.ctx.current_function
        method = event.method
        if method in _MOVES and event.receiver is not None and isinstance(event.receiver.info, ClassInfo):
            if not self._is_self(event.node.func):
                # moving an instance moves all it holds, also what its bases' __init__ built
                pending = [event.receiver.info]
                while pending:
                    info = pending.pop()
                    self._moved_instances.add(id(info))
                    pending.extend(info.bases)
                return
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return
        if context.class_info.framework_placed or not self._is_self_method_call(event.node.func):
            return
        in_init = context.node.name.value == "__init__"
        move = self._moves.get(id(context.node)) if in_init else None
        if method in _MOVES and in_init and move is None:
            result = event.result
            placed_here = result.origin is not None and result.origin.node is event.node  # not `.to(torch.float16)`
            if placed_here and result.device is not None and result.device.may_be_accelerator:
                self._moves[id(context.node)] = _Move(event.node, context.class_info)
            return
        if method in _REGISTERING:
            creation = self._registered(event)
            if creation is not None:
                self._record(context.class_info, context.node, move, creation)
        elif move is not None and method in context.class_info.methods and method != "__init__":
            move.after.append(method)

    def on_assign(self, statement, target, value_node, value: Value) -> None:  # type: ignore[no-untyped-def]
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return
        if not isinstance(target, cst.Attribute) or not self._is_self(target):
            return
        if not _placed_on_host(value, parts=True):
            return
        move = self._moves.get(id(context.node)) if context.node.name.value == "__init__" else None
        self._record(context.class_info, context.node, move, _Creation(statement, f"`{self.ctx.source_of(target)}`"))

    def finish(self) -> None:
        for move in self._moves.values():
            if self._moved_later(move.class_info):
                continue
            first = self._first_creation(move)
            if first is None:
                continue
            where = f"line {self.ctx.line(first.node)}"
            self.ctx.report(
                move.node,
                f"`{self.ctx.source_of(move.node)}` moves only the parts built so far: {first.what} (created at {where}) "
                "and whatever comes after it stay on the CPU; move the module once it is complete (at the end of "
                "`__init__`, or where it is constructed)",
            )

    # ------------------------------------------------------------------ helpers

    def _record(self, class_info: ClassInfo, function: cst.FunctionDef, move: Optional[_Move], creation: _Creation) -> None:
        if move is not None:
            move.after.append(creation)
        elif function.name.value != "__init__":
            self._created_in.setdefault((id(class_info), function.name.value), []).append(creation)

    def _first_creation(self, move: _Move) -> Optional[_Creation]:
        for item in move.after:
            if isinstance(item, _Creation):
                return item
            created = self._created_in.get((id(move.class_info), item))
            if created:
                return created[0]
        return None

    def _moved_later(self, class_info: ClassInfo) -> bool:
        """Is an instance of this class (or of a subclass) moved after it is built?"""
        return id(class_info) in self._moved_instances

    def _registered(self, event: CallEvent) -> Optional[_Creation]:
        """``self.register_buffer("mask", torch.ones(3))`` and the like, with a host-made part."""
        positional = [(arg, value) for arg, value in event.args if arg.keyword is None and not arg.star]
        if len(positional) < 2 or not isinstance(positional[0][0].value, cst.SimpleString):
            return None
        part = positional[1][1]
        if not _placed_on_host(part, parts=event.method in ("add_module", "register_module")):
            return None
        return _Creation(event.node, f"{event.method.replace('register_', '')} {self.ctx.source_of(positional[0][0].value)}")

    def _is_self(self, node: cst.BaseExpression) -> bool:
        """Is ``node`` (``self.fc`` / the receiver of ``self.to``) an attribute of the method's own instance?"""
        context = self.ctx.current_function
        if context.node is None or not context.node.params.params:
            return False
        owner = node.value if isinstance(node, cst.Attribute) else node
        return isinstance(owner, cst.Name) and owner.value == context.node.params.params[0].name.value

    def _is_self_method_call(self, func: cst.BaseExpression) -> bool:
        return isinstance(func, cst.Attribute) and self._is_self(func)


def _placed_on_host(value: Value, parts: bool) -> bool:
    """A module with parameters, a parameter or a buffer known to be built on the host."""
    if value.device is None or not value.device.is_cpu:
        return False
    if value.kind == Kind.MODULE:
        return parts and value.role is not Role.PARALLEL_WRAPPER
    return value.kind == Kind.TENSOR and (value.role is Role.PARAMETER or not parts)
