from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Kind
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_BOOLEAN_PROPERTIES = frozenset({"is_cuda", "is_cpu", "is_meta", "is_mps", "is_xpu", "is_quantized", "is_sparse"})


class DevicePropertyCalled(Rule):
    """
    ## What it does
    Flags `x.is_cuda()`, `x.is_cpu()`, `x.is_meta()` (and the other `is_*` device
    properties) and `x.device()` called with no arguments on a tensor: a name the analysis knows
    holds a tensor, or a parameter annotated `torch.Tensor`. Other objects have methods of these
    names (compiler IR nodes, device wrappers), so a receiver of unknown type is left alone, as is
    a file that defines its own `is_cuda` / `device` method.

    ## Why is this bad?
    On a tensor these are properties. `x.is_cuda()` calls a `bool`: `TypeError: 'bool' object
    is not callable`, raised only on the line's first run - often in an error path.

    ## Example
    ```python
    if x.is_cuda():
        x = x.cpu()
    ```

    ## Use instead
    ```python
    if x.is_cuda:
        x = x.cpu()
    ```
    The fix drops the parentheses. It is safe: the call could only raise.
    """

    code = "DL305"
    name = "device-property-called"
    severity = Severity.ERROR
    summary = "`x.is_cuda()`, `x.device()`: calling a tensor property raises TypeError."
    fix_safety = "safe"
    valid = (
        "import torch\nx = torch.zeros(3)\nif x.is_cuda:\n    pass\n",
        "import torch\nclass Wrapper:\n    def is_cuda(self):\n        return True\nif w.is_cuda():\n    pass\n",
        "import torch\nd = accelerator.device()\n",
        "import torch\nflag = x.is_cuda(0)\n",
        # an object of unknown type with an is_cuda() method (torch._inductor's scheduler nodes)
        "import torch\ndef fuse(node1, node2):\n    return node1.is_cpu() and node2.is_cpu()\n",
    )
    invalid = (
        Example(
            "import torch\ndef f(x: torch.Tensor):\n    if x.is_cuda():  # expect: DL305\n        return x.cpu()\n",
            "import torch\ndef f(x: torch.Tensor):\n    if x.is_cuda:  # expect: DL305\n        return x.cpu()\n",
        ),
        Example(
            "import torch\nx = torch.zeros(3)\nd = x.device()  # expect: DL305\n",
            "import torch\nx = torch.zeros(3)\nd = x.device  # expect: DL305\n",
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._defined: dict[str, bool] = {}

    def _file_defines(self, name: str) -> bool:
        if name not in self._defined:
            self._defined[name] = re.search(rf"\bdef\s+{name}\s*\(", self.ctx.source) is not None
        return self._defined[name]

    def on_call(self, event: CallEvent) -> None:
        method = event.method
        if method is None or event.node.args or event.receiver is None:
            return
        if method in _BOOLEAN_PROPERTIES:
            if event.receiver.kind != Kind.TENSOR or self._file_defines(method):
                return
        elif method == "device":
            if event.receiver.kind != Kind.TENSOR or self._file_defines("device"):
                return
        else:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        spelled = self.ctx.source_of(func)
        self.ctx.report(
            event.node,
            f"`{spelled}` is a property, not a method: calling it raises TypeError; use `{spelled}`",
            fix=FixSpec("Drop the call parentheses", (NodeEdit(event.node, "replace", self.ctx.module.code_for_node(func)),)),
        )
