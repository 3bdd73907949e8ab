from __future__ import annotations

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_CONVERSIONS = frozenset({"cuda", "to", "cpu", "half", "double", "float", "bfloat16"})
_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


class ParameterMoveUnregisters(Rule):
    """
    ## What it does
    Flags `nn.Parameter(...).cuda()`, `.to(...)`, `.half()`, `.double()` and the other
    conversions applied to a freshly built `nn.Parameter`.

    ## Why is this bad?
    The conversion returns a plain, non-leaf `Tensor`, not a `Parameter`. Assigned to
    `self.w` it is not registered: not in `parameters()` (never trained), not in
    `state_dict()` (never saved), and `model.to()` does not move it.

    ## Example
    ```python
    self.w = nn.Parameter(torch.randn(10, 20)).cuda(0)
    ```

    ## Use instead
    ```python
    self.w = nn.Parameter(torch.randn(10, 20, device="cuda:0"))
    ```
    The fix moves the device into the inner factory when the inner value is a torch factory
    without `device=`, else moves the conversion inside: `nn.Parameter(t.cuda(0))`. It is
    safe: the attribute becomes the registered parameter the line meant to create.
    """

    code = "DL102"
    name = "parameter-move-unregisters"
    severity = Severity.ERROR
    summary = "`nn.Parameter(...).cuda()` returns a plain tensor: the parameter is not registered."
    fix_safety = "safe"
    valid = (
        "import torch\nfrom torch import nn\nw = nn.Parameter(torch.randn(10, 20, device='cuda:0'))\n",
        "import torch\nfrom torch import nn\ndef make(t):\n    return nn.Parameter(t.cuda())\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nw = nn.Parameter(torch.randn(10, 20)).cuda(0)  # expect: DL102\n",
            "import torch\nfrom torch import nn\nw = nn.Parameter(torch.randn(10, 20, device=\"cuda:0\"))  # expect: DL102\n",
        ),
        Example(
            "import torch\nfrom torch import nn\ndef make(t):\n    return nn.Parameter(t).half()  # expect: DL102\n",
            "import torch\nfrom torch import nn\ndef make(t):\n    return nn.Parameter(t.half())  # expect: DL102\n",
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        if event.method not in _CONVERSIONS:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        inner = func.value
        if not isinstance(inner, cst.Call) or self.ctx.analyzer.qualname_of(inner.func, event.state) not in _PARAMETER:
            return
        data = positional_args(inner)
        self.ctx.report(
            event.node,
            f"`.{event.method}()` on an `nn.Parameter` returns a plain tensor, not a Parameter: it is not "
            "registered, trained or saved; convert the data inside `nn.Parameter(...)`",
            fix=self._fix(event, inner, data[0].value if data else None),
        )

    def _fix(self, event: CallEvent, parameter: cst.Call, data: "cst.BaseExpression | None") -> "FixSpec | None":
        if data is None:
            return None
        code = self.ctx.module.code_for_node
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        method = func.attr.value
        device = None
        if method == "cuda" and len(event.node.args) <= 1:
            args = positional_args(event.node)
            if not event.node.args:
                device = '"cuda"'
            elif len(args) == 1 and isinstance(args[0].value, cst.Integer):
                device = f'"cuda:{args[0].value.value}"'
        if (
            device is not None
            and isinstance(data, cst.Call)
            and self.ctx.analyzer.qualname_of(data.func, event.state) in api.FACTORIES
            and self.ctx.analyzer.qualname_of(data.func, event.state) not in api.LEGACY_TYPED_CONSTRUCTORS
            and keyword_arg(data, "device") is None
            and data.args
        ):
            inner_text = code(data)
            new_data = inner_text[: inner_text.rstrip().rfind(")")] + f", device={device})"
        else:
            arguments = ", ".join(code(arg).strip().rstrip(",") for arg in event.node.args)
            new_data = f"{code(data)}.{method}({arguments})"
        replacement = code(parameter.func) + "(" + ", ".join(
            [new_data] + [code(arg).strip().rstrip(",") for arg in parameter.args[1:]]
        ) + ")"
        return FixSpec("Convert the data inside nn.Parameter(...)", (NodeEdit(event.node, "replace", replacement),))
