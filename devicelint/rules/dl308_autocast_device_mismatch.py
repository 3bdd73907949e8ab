from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import OwnScopeVisitor, keyword_arg, positional_args
from devicelint.analysis.state import State
from devicelint.analysis.torch_semantics import autocast_device_type
from devicelint.analysis.values import UNKNOWN, Device, Kind, Role, Value
from devicelint.findings import Severity
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.rules.base import Example, Rule

_PLACED = frozenset({Kind.TENSOR, Kind.BATCH, Kind.MODULE, Kind.CRITERION})
#: libraries that only run on CUDA: a file built on them is CUDA-only whatever its device variables say
_CUDA_ONLY_IMPORT = re.compile(r"^\s*(?:import|from)\s+(?:tensorrt|pycuda|cupy|polygraphy|cuda)\b", re.MULTILINE)


@dataclass
class _Block:
    """One ``with <autocast>:`` statement and what the analysis saw computed in its body."""

    call: cst.Call
    device_type: str
    #: the literal that names the device type, or None for ``torch.cuda.amp.autocast``
    type_node: Optional[cst.BaseExpression]
    #: ids of the calls in the body (nested functions and classes excluded)
    body_calls: frozenset[int]
    #: the names bound where the ``with`` statement starts
    state: State
    #: (expression, device) of every tensor or module the body computes with
    placed: list[tuple[cst.CSTNode, Device]] = field(default_factory=list)
    #: the module calls among them, the clearest thing to name in a message
    module_calls: list[tuple[cst.CSTNode, Optional[Device]]] = field(default_factory=list)
    #: per accelerator label: whether it names a device the program chose at run time
    chosen: dict[str, Optional[str]] = field(default_factory=dict)


class AutocastDeviceMismatch(Rule):
    """
    ## What it does
    Flags a `with torch.autocast("cuda"):` / `with torch.autocast(device_type="cuda"):` /
    `with torch.cuda.amp.autocast():` block (or a function decorated with one of them) whose
    body computes on tensors or modules whose device the program does not fix to CUDA:

    * the device follows something chosen elsewhere - the model (inside a module's methods),
      a function's `device` or tensor argument, configuration (`args.device`) - or a device
      variable chosen at run time (`torch.device("cuda" if torch.cuda.is_available() else
      "cpu")`): on a CPU or MPS run the block gets no mixed precision;
    * everything the body computes with is known to be on the CPU (a model never moved, host
      tensors): `autocast("cuda")` cannot reach it on any machine. Likewise
      `autocast("cpu")` around modules on a concrete CUDA device;
    * `torch.autocast(device)` / `device_type=device` where `device` holds a `torch.device`
      object (not its type string): that raises `ValueError` on every machine.

    Left alone: code that is CUDA throughout (`device = "cuda"`, `.cuda()` everywhere: it is
    consistent), blocks whose device is unknown, `device_type=device.type` and other
    non-literal device types and `enabled=False` blocks (they switch autocast off on purpose).
    An autocast context kept in a variable (`ctx = torch.autocast(...)`) is judged on the bodies
    of the `with ctx:` statements of the same scope, when the scope binds that name once. A
    device that is the CPU on some paths and an accelerator on others (a `detect_device()`
    helper returning `torch.device("cuda")` or `torch.device("cpu")`, either branch of an `if`)
    is chosen at run time, and so is a device default bound before a module-level
    `exec(open("configurator.py").read())`, which may override it. A file that imports a
    CUDA-only library (`tensorrt`, `pycuda`, `cupy`, `polygraphy`, `cuda`) runs on CUDA by
    construction: its device variables are not taken as a choice.

    Fix (unsafe): when the block's device is a variable holding a `torch.device(...)`, the
    device type becomes `<device>.type` (and `torch.cuda.amp.autocast(k=v)` with keyword
    arguments only becomes `torch.autocast(<device>.type, k=v)`). It is unsafe because on a CPU
    run the block then really runs in mixed precision (bfloat16 by default, or the `dtype=`
    given), which changes the numbers. A string device variable gets no fix: `str.type` does
    not exist, and `torch.autocast` rejects a `torch.device` (it wants the type string). A
    `torch.device` object passed as the device type gets a safe fix, `<device>.type`: the call
    raised before, so nothing that ran changes. Decorators get no fix.

    ## Why is this bad?
    Autocast changes only the ops of its own device type: verified on torch 2.13 (CPU build),
    `with torch.autocast("cpu"):` turns a CPU matmul into bfloat16 and leaves a meta-device
    matmul in float32 - the dispatch is per device. Where CUDA is absent,
    `torch.autocast("cuda")` warns `CUDA is not available or torch_xla is imported. Disabling
    autocast.` and the block runs in float32; `torch.cuda.amp.autocast()` additionally raises a
    `FutureWarning` (`torch.cuda.amp.autocast(args...)` is deprecated; use
    `torch.amp.autocast('cuda', args...)`). So on a CPU, MPS or XPU run the code the author
    made portable silently loses its mixed precision (and its speed and memory savings), and a
    CPU-only computation under `autocast("cuda")` never had any. `torch.autocast` also rejects
    a `torch.device` object (`ValueError: Expected device_type of type str`), hence `.type`.

    ## Example
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x.to(device)), y.to(device))
    ```

    ## Use instead
    ```python
    for x, y in loader:
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss = criterion(model(x.to(device)), y.to(device))
    ```
    The fix to `device.type` is unsafe: on a CPU run it turns mixed precision on where the block
    ran in float32, which changes the numbers; the fix of a `torch.device` passed as the device
    type is safe (that call raised before).
    """

    code = "DL308"
    name = "autocast-device-mismatch"
    severity = Severity.WARNING
    summary = "`autocast(\"cuda\")` hard-coded around work whose device is chosen elsewhere or is the CPU: no mixed precision there."
    fix_safety = "unsafe"
    valid = (
        # CUDA throughout: consistent
        "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2).cuda()\nx = torch.randn(3, 4).cuda()\n"
        "with torch.autocast('cuda'):\n    out = model(x)\n",
        "import torch\nfrom torch import nn\ndevice = 'cuda'\nmodel = nn.Linear(4, 2).to(device)\n"
        "with torch.cuda.amp.autocast():\n    out = model(torch.randn(3, 4, device=device))\n",
        # the device type follows the device
        "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nwith torch.autocast(device.type):\n    out = model(torch.randn(3, 4, device=device))\n",
        # switched off on purpose
        "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def forward(self, x):\n"
        "        with torch.autocast('cuda', enabled=False):\n            return self.proj(x.float())\n",
        # nothing known about where the work runs
        "import torch\ndef run(fn, batch):\n    with torch.autocast('cuda'):\n        return fn(batch)\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\nwith torch.autocast('cuda'):  # expect: DL308\n"
            "    out = model(torch.randn(3, 4, device=device))\n",
            fixed="import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(4, 2).to(device)\nwith torch.autocast(device.type):  # expect: DL308\n"
            "    out = model(torch.randn(3, 4, device=device))\n",
        ),
        Example(
            "import torch\nfrom torch import nn\nclass Block(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
            "        with torch.cuda.amp.autocast():  # expect: DL308\n            return self.fc(x)\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\n"
            "with torch.autocast(device_type='cuda', dtype=torch.float16):  # expect: DL308\n    out = model(torch.randn(3, 4))\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._blocks: list[_Block] = []
        #: per function node: the block its autocast decorator makes, if any
        self._decorated: dict[int, Optional[_Block]] = {}
        #: per function node (None: the module): its ``with`` items that are calls -> the With
        self._with_items: dict[Optional[int], dict[int, cst.With]] = {}

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in api.AUTOCAST_CONTEXTS or event.qualname in api.CUDA_AUTOCAST_CONTEXTS:
            self._open_block(event)
            return
        decorated = self._decorated_block(event)
        if decorated is not None:
            self._note_placed(decorated, event)
        for block in self._blocks:
            if id(event.node) in block.body_calls:
                self._note_placed(block, event)

    def _open_block(self, event: CallEvent) -> None:
        """A ``with torch.autocast(...)`` item: its body is the block."""
        found = autocast_device_type(event.node, event.qualname)
        if found is None:
            self._device_object_as_type(event)
            return
        with_node = self._with_of(event.node)
        if with_node is not None:
            bodies = [with_node.body]
        else:
            # `ctx = torch.autocast(...)`, entered later as `with ctx:` in the same scope
            bodies = self._entered_later(event.node)
            if not bodies:
                return
        collector = _BodyCalls()
        for body in bodies:
            walk.visit(body, collector)
        self._blocks.append(_Block(event.node, found[0], found[1], frozenset(collector.ids), dict(event.state)))

    def _device_object_as_type(self, event: CallEvent) -> None:
        """``torch.autocast(device)`` with a ``torch.device``: a ValueError, whatever the device."""
        if event.qualname not in api.AUTOCAST_CONTEXTS:
            return
        given = keyword_arg(event.node, "device_type")
        positional = positional_args(event.node)
        type_arg = given if given is not None else (positional[0] if positional else None)
        if type_arg is None:
            return
        value = next((value for arg, value in event.args if arg is type_arg), None)
        if value is None or value.kind != Kind.DEVICE:
            return
        made = value.origin.node if value.origin is not None else None
        if not (isinstance(made, cst.Call) and self.ctx.analyzer.qualname_of(made.func, event.state) == "torch.device"):
            return  # a device string chosen at run time is fine
        shown = self.ctx.module.code_for_node(type_arg.value)
        self.ctx.report(
            type_arg.value,
            f"`{self.ctx.source_of(type_arg.value)}` is a `torch.device`, but autocast wants its type string: "
            "`ValueError: Expected device_type of type str`; pass `.type`",
            fix=FixSpec(f"Use `{shown}.type`", (NodeEdit(type_arg.value, "replace", f"{shown}.type"),)),
        )

    def _decorated_block(self, event: CallEvent) -> Optional[_Block]:
        """The block of the function being analysed when an autocast decorates it
        (``@torch.cuda.amp.autocast()``): every call of its body is in the block."""
        function = self.ctx.current_function.node
        if function is None:
            return None
        key = id(function)
        if key not in self._decorated:
            self._decorated[key] = None
            for decorator in function.decorators:
                call = decorator.decorator
                if not isinstance(call, cst.Call):
                    continue
                qualname = self.ctx.analyzer.qualname_of(call.func, event.state)
                found = autocast_device_type(call, qualname) if qualname in api.AUTOCAST_CONTEXTS or qualname in api.CUDA_AUTOCAST_CONTEXTS else None
                if found is not None:
                    # no fix: the decorator is evaluated where no device variable is in scope
                    block = _Block(call, found[0], None, frozenset(), {})
                    self._blocks.append(block)
                    self._decorated[key] = block
                    break
        return self._decorated[key]

    def _entered_later(self, call: cst.Call) -> list[cst.BaseSuite]:
        """The bodies of ``with ctx:`` statements of this scope when ``call`` is bound to a plain
        name (``ctx = torch.autocast(...)``) that the scope binds nowhere else."""
        function = self.ctx.current_function.node
        finder = _ContextVariable(call)
        if function is not None:
            walk.visit(function.body, finder)
        else:
            for statement in self.ctx.module.body:
                walk.visit(statement, finder)
        if finder.name is None or finder.targets.get(finder.name) != 1:
            return []
        return [body for name, body in finder.withs if name == finder.name]

    def _with_of(self, call: cst.Call) -> Optional[cst.With]:
        """The ``with`` statement ``call`` is an item of, in the code being analysed."""
        function = self.ctx.current_function.node
        key = id(function) if function is not None else None
        if key not in self._with_items:
            finder = _WithItems()
            walk.visit(function if function is not None else self.ctx.module, finder)
            self._with_items[key] = finder.items
        return self._with_items[key].get(id(call))

    def _note_placed(self, block: _Block, event: CallEvent) -> None:
        seen: list[tuple[cst.CSTNode, Value]] = [(event.node, event.result)]
        if event.callee.kind in (Kind.MODULE, Kind.CRITERION):
            seen.append((event.node.func, event.callee))
            block.module_calls.append((event.node, event.callee.device))
        if event.receiver is not None:
            seen.append((event.node.func, event.receiver))
        seen.extend((arg.value, value) for arg, value in event.args)
        for node, value in seen:
            # a value of unknown kind has a device only when it was moved (`batch.to(device)`)
            if (value.kind in _PLACED or value.kind == Kind.UNKNOWN) and value.device is not None:
                block.placed.append((node, value.device))
                if value.device.is_accel and value.device.label not in block.chosen:
                    block.chosen[value.device.label] = self._chosen_device_name(value.device.label, event.state)

    def _chosen_device_name(self, label: str, state: State) -> Optional[str]:
        """``label`` when it is a variable holding a device the program picks at run time
        (``torch.device("cuda" if torch.cuda.is_available() else "cpu")``, ``"cuda" if ... else
        "cpu"``); None for a literal device or anything else."""
        if label.isidentifier():
            value = self.ctx.analyzer.lookup(label, state)
        elif all(part.isidentifier() for part in label.split(".")):
            value = state.get(label, UNKNOWN)  # `self.device`, set by another method
        else:
            return None
        if value.role is Role.RUN_TIME_CHOICE and value.kind in (Kind.DEVICE, Kind.STR):
            # the CPU on some paths, the accelerator on others (a `detect_device()` helper), or
            # a default that configuration read at run time may override
            return label
        if value.kind != Kind.DEVICE:
            return None
        if value.origin is None:
            return None
        made = value.origin.node
        if isinstance(made, cst.IfExp):
            return label
        if isinstance(made, cst.Call) and self.ctx.analyzer.qualname_of(made.func, state) == "torch.device":
            first = positional_args(made)
            if first and isinstance(first[0].value, cst.IfExp):
                return label
        return None

    def finish(self) -> None:
        for block in self._blocks:
            self._judge(block)

    def _judge(self, block: _Block) -> None:
        if not block.placed:
            return
        spelled = self.ctx.source_of(block.call, 50)
        devices = [device for _, device in block.placed]
        if block.device_type == "cpu":
            # the modules tell where the work runs (host tensors also appear as what gets moved)
            models = [device for _, device in block.module_calls]
            concrete = next((d for d in models if d is not None and d.is_accel and block.chosen.get(d.label) is None), None)
            if concrete is not None and all(d is not None and d.is_accel for d in models):
                self.ctx.report(
                    block.call,
                    f"`{spelled}` wraps work on {concrete.describe()}: CPU autocast does not change CUDA ops, "
                    "so the block runs in full precision; pass the device's type (`x.device.type`)",
                )
            return
        symbolic = next((d for d in devices if d.is_symbolic), None)
        chosen_name = next((block.chosen[d.label] for d in devices if d.is_accel and block.chosen.get(d.label)), None)
        # a program built on a CUDA-only library (TensorRT engines, CUDA kernels) runs on CUDA
        # whatever its device variables say
        cuda_only = _CUDA_ONLY_IMPORT.search(self.ctx.source) is not None
        if (symbolic is not None or chosen_name is not None) and not cuda_only:
            if symbolic is not None:
                # `accelerator.device` reads better than "the device of `accelerator.device`"
                where = f"`{symbolic.label}`" if symbolic.label.endswith(".device") else symbolic.describe()
            else:
                where = f"`{chosen_name}`, chosen at run time"
            self.ctx.report(
                block.call,
                f"`{spelled}` hard-codes CUDA, but the block computes on {where}: on a CPU or MPS run "
                "autocast is disabled (with a warning) and the block runs without mixed precision; pass the type of the "
                "device the work is on (`device.type`, `x.device.type`)",
                fix=self._fix(block, chosen_name),
            )
            return
        if all(d.is_cpu for d in devices):
            shown = block.module_calls[0][0] if block.module_calls else block.placed[0][0]
            self.ctx.report(
                block.call,
                f"`{spelled}` wraps work that is on the CPU on every machine (`{self.ctx.source_of(shown)}`): "
                "CUDA autocast does not change CPU ops, so the block never runs in mixed precision; move the work "
                "to the GPU or use `torch.autocast(\"cpu\")`",
            )

    def _fix(self, block: _Block, device_name: Optional[str]) -> Optional[FixSpec]:
        """``<device>.type`` for a variable known to hold a ``torch.device``."""
        if device_name is None:
            return None
        value = self.ctx.analyzer.lookup(device_name, block.state)
        made = value.origin.node if value.origin is not None else None
        if not (isinstance(made, cst.Call) and self.ctx.analyzer.qualname_of(made.func, block.state) == "torch.device"):
            return None
        title = f"Use `{device_name}.type` as the device type"
        if block.type_node is not None:
            return FixSpec(title, (NodeEdit(block.type_node, "replace", f"{device_name}.type"),), safe=False)
        if any(arg.keyword is None for arg in block.call.args):
            return None  # torch.cuda.amp.autocast's positional order differs from torch.autocast's
        if self.ctx.analyzer.qualname_of(cst.Name("torch"), block.state) != "torch":
            return None
        rest = ", ".join(self.ctx.module.code_for_node(arg).strip().rstrip(",") for arg in block.call.args)
        text = f"torch.autocast({device_name}.type{', ' + rest if rest else ''})"
        return FixSpec(title, (NodeEdit(block.call, "replace", text),), safe=False)


class _ContextVariable(OwnScopeVisitor):
    """``name = <call>`` in one scope, how often the scope binds each plain name, and its
    ``with name:`` statements (nested functions and classes excluded)."""

    def __init__(self, call: cst.Call) -> None:
        super().__init__()
        self.call = call
        self.name: Optional[str] = None
        self.targets: dict[str, int] = {}
        self.withs: list[tuple[str, cst.BaseSuite]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.targets[target.target.value] = self.targets.get(target.target.value, 0) + 1
                if node.value is self.call and len(node.targets) == 1:
                    self.name = target.target.value

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Name):
                self.withs.append((item.item.value, node.body))


class _WithItems(cst.CSTVisitor):
    """Maps each call that is a ``with`` item to its ``with`` statement."""

    def __init__(self) -> None:
        self.items: dict[int, cst.With] = {}

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call):
                self.items[id(item.item)] = node


class _BodyCalls(OwnScopeVisitor):
    """The calls of a block, not entering nested functions, lambdas and classes."""

    def __init__(self) -> None:
        self.ids: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        self.ids.add(id(node))
