from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Kind, Role
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_SELF_CALL = re.compile(r"\bself\.([A-Za-z_]\w*)\s*\(")


class ModuleCreatedInForward(Rule):
    """
    ## What it does
    Flags a module with parameters (`nn.Linear(...)`, `nn.BatchNorm2d(...)`, an
    `nn.Sequential` of such layers, a project module that builds them) constructed inside
    `forward`, or inside another method of the class that `forward` calls. Parameter-free
    modules built on the fly (`nn.ReLU()`, `nn.Flatten()`, `nn.Dropout(p)`, `nn.Identity()`,
    pooling and upsampling layers) are left alone.

    ## Why is this bad?
    Its parameters are born on the CPU and freshly initialised at every call: they are never
    trained, never saved, and never moved by `model.to(device)` - on a GPU the call mixes
    devices.

    ## Example
    ```python
    def forward(self, x):
        return nn.Linear(x.shape[-1], 10)(x)
    ```

    ## Use instead
    ```python
    def __init__(self, features):
        super().__init__()
        self.head = nn.Linear(features, 10)

    def forward(self, x):
        return self.head(x)
    ```
    """

    code = "DL106"
    name = "module-created-in-forward"
    severity = Severity.ERROR
    summary = "A module with parameters built inside `forward`: re-initialised every call, never trained or moved."
    valid = (
        "from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        return nn.ReLU()(nn.Flatten()(x))\n",
        "from torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"
        "    def forward(self, x):\n        return self.fc(x)\n",
        "from torch import nn\nclass M(nn.Module):\n    def build(self):\n        return nn.Linear(2, 2)\n    def forward(self, x):\n        return x\n",
        "from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n        if self.grow:\n"
        "            bigger = nn.Embedding(10, 4)\n            self.table = bigger\n        return x\n",
    )
    invalid = (
        Example(
            "from torch import nn\nclass M(nn.Module):\n    def forward(self, x):\n"
            "        return nn.Linear(x.shape[-1], 10)(x)  # expect: DL106\n"
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def head(self, x):\n"
            "        norm = nn.BatchNorm1d(8)  # expect: DL106\n        return norm(x)\n"
            "    def forward(self, x):\n        return self.head(x)\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._reached: dict[int, set[str]] = {}
        #: constructions to report, and those nested in another (reported as part of it)
        self._candidates: dict[int, tuple[cst.Call, str]] = {}
        self._nested: set[int] = set()
        #: constructions assigned to `self.<attribute>`: registered submodules, built on purpose
        self._stored: set[int] = set()

    def on_assign(self, statement, target, value_node, value) -> None:  # type: ignore[no-untyped-def]
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            if value.kind == Kind.MODULE and value.origin is not None:
                self._stored.add(id(value.origin.node))

    def _methods_reached_from_forward(self, class_info) -> set[str]:  # type: ignore[no-untyped-def]
        key = id(class_info)
        if key not in self._reached:
            reached: set[str] = set()
            pending = ["forward"]
            while pending:
                name = pending.pop()
                method = class_info.methods.get(name)
                if name in reached or method is None:
                    continue
                reached.add(name)
                pending.extend(_SELF_CALL.findall(self.ctx.module.code_for_node(method)))
            self._reached[key] = reached
        return self._reached[key]

    def on_call(self, event: CallEvent) -> None:
        result = event.result
        if event.method is not None or result.kind != Kind.MODULE or result.device is None or result.role is Role.PARALLEL_WRAPPER:
            return
        context = self.ctx.current_function
        if context.node is None or context.class_info is None or not context.class_info.is_module:
            return
        method = context.node.name.value
        if method == "__init__" or method not in self._methods_reached_from_forward(context.class_info):
            return
        for _, value in event.args:
            if value.kind == Kind.MODULE and value.origin is not None:
                self._nested.add(id(value.origin.node))
        self._candidates[id(event.node)] = (event.node, method)

    def finish(self) -> None:
        for key, (node, method) in self._candidates.items():
            if key in self._nested or key in self._stored:
                continue
            shown = self.ctx.source_of(node.func)
            self.ctx.report(
                node,
                f"`{shown}(...)` builds a module with parameters inside `{method}`, which runs at every forward: "
                "its weights are re-initialised each call, never trained, saved or moved; build it in `__init__`",
            )
