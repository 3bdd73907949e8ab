from __future__ import annotations

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import keyword_arg, positional_args
from typing import Optional

from devicelint.analysis.values import Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_CONVERSIONS = frozenset({"cuda", "to", "cpu", "half", "double", "float", "bfloat16"})
#: the conversions that return a new tensor (a copy) where they change anything: on a GPU run,
#: a move of a host tensor always does
_COPYING_CONVERSIONS = frozenset({"cuda", "to", "half", "double", "bfloat16"})
_PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


def _asks_grad(call: cst.Call) -> bool:
    asked = keyword_arg(call, "requires_grad")
    return asked is not None and isinstance(asked.value, cst.Name) and asked.value.value == "True"


class ParameterMoveUnregisters(Rule):
    """
    ## What it does
    Flags `nn.Parameter(...).cuda()`, `.to(...)`, `.half()`, `.double()` and the other
    conversions applied to a freshly built `nn.Parameter`; also a move or cast of a tensor a
    torch factory has just made on the host with `requires_grad=True`
    (`torch.ones(2, requires_grad=True).to(device)`): the copy is no leaf, so its `.grad`
    stays None and an optimizer refuses it ("can't optimize a non-leaf Tensor"). The same
    where such a leaf is re-bound to its own move later (`z = z.cuda()`) and then handed to a
    `torch.optim` optimizer: reported where the leaf is made.

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
        # made where it belongs; a cast that may change nothing; no gradient asked for
        "import torch\nscale = torch.ones(2, device='cuda', requires_grad=True)\n"
        "bias = torch.zeros(2, requires_grad=True).to(torch.float32)\nnoise = torch.randn(2).cuda()\n",
    )
    invalid = (
        # a leaf asked for on the host, then moved: the copy is no leaf (on a GPU run)
        Example(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "scale = torch.ones(2, requires_grad=True).to(device)  # expect: DL102\n"
            "opt = torch.optim.SGD([scale], lr=0.1)\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nw = nn.Parameter(torch.randn(10, 20)).cuda(0)  # expect: DL102\n",
            "import torch\nfrom torch import nn\nw = nn.Parameter(torch.randn(10, 20, device=\"cuda:0\"))  # expect: DL102\n",
        ),
        Example(
            "import torch\nfrom torch import nn\ndef make(t):\n    return nn.Parameter(t).half()  # expect: DL102\n",
            "import torch\nfrom torch import nn\ndef make(t):\n    return nn.Parameter(t.half())  # expect: DL102\n",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        #: per scope and name: the creation of a host leaf asked to require grad, and the move
        #: that replaced it by its copy (None until then)
        self._leaves: dict[tuple[int, str], tuple[cst.CSTNode, Optional[cst.CSTNode]]] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        """``x = torch.randn(n, requires_grad=True)`` (or ``Variable(t, requires_grad=True)``)
        on the host, later ``x = x.cuda()`` / ``x = x.to(device)``: the name now holds the
        move's copy, which is no leaf (see _check_optimized)."""
        if not isinstance(target, cst.Name):
            return
        key = (id(self.ctx.current_function.node), target.value)
        if isinstance(value_node, cst.Call) and _asks_grad(value_node) and self._made_on_host(value_node, value):
            self._leaves[key] = (value_node, None)
            return
        known = self._leaves.get(key)
        if known is None:
            return
        func = value_node.func if isinstance(value_node, cst.Call) else None
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("cuda", "to")
            and isinstance(func.value, cst.Name)
            and func.value.value == target.value
            and value.device is not None
            and value.device.may_be_accelerator
        ):
            if known[1] is None:
                self._leaves[key] = (known[0], value_node)
            return
        del self._leaves[key]  # re-bound to something else

    def _made_on_host(self, call: cst.Call, value: Value) -> bool:
        return value.kind == Kind.TENSOR and value.device is not None and value.device.is_cpu and keyword_arg(call, "device") is None

    def _check_optimized(self, event: CallEvent) -> None:
        """``torch.optim.Adam([x], lr=...)`` where ``x`` is the moved copy of a host leaf that
        asked for ``requires_grad=True``: the copy is no leaf, so on a GPU run the optimizer
        raises "can't optimize a non-leaf Tensor" (on a CPU run the move returns the leaf
        itself). Reported where the leaf is made, which is where it belongs on the device."""
        scope = id(self.ctx.current_function.node)
        params = keyword_arg(event.node, "params")
        if params is None:
            positional = positional_args(event.node)
            params = positional[0] if positional else None
        if params is None or not isinstance(params.value, (cst.List, cst.Tuple)):
            return
        for element in params.value.elements:
            if not isinstance(element.value, cst.Name):
                continue
            known = self._leaves.get((scope, element.value.value))
            if known is None or known[1] is None:
                continue
            created, moved = known
            name = element.value.value
            self.ctx.report(
                created,
                f"`{name}` is made on the host with `requires_grad=True`, then replaced by its move (line "
                f"{self.ctx.line(moved)}), a copy that is not a leaf: on a GPU the optimizer built from it "
                f"(line {self.ctx.line(event.node)}) raises \"can't optimize a non-leaf Tensor\"; create it on "
                "the device, or set `requires_grad` after the move",
                related=((moved, "moved here"), (event.node, "optimized here")),
            )

    def on_call(self, event: CallEvent) -> None:
        if event.qualname is not None and event.qualname.startswith(api.OPTIMIZER_PREFIX) and "lr_scheduler" not in event.qualname:
            self._check_optimized(event)
            return
        if event.method not in _CONVERSIONS:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        inner = func.value
        if not isinstance(inner, cst.Call):
            return
        made_by = self.ctx.analyzer.qualname_of(inner.func, event.state)
        if made_by in api.FACTORIES and event.method in _COPYING_CONVERSIONS:
            self._check_leaf(event, inner, made_by)
            return
        if made_by not in _PARAMETER:
            return
        data = positional_args(inner)
        self.ctx.report(
            event.node,
            f"`.{event.method}()` on an `nn.Parameter` returns a plain tensor, not a Parameter: it is not "
            "registered, trained or saved; convert the data inside `nn.Parameter(...)`",
            fix=self._fix(event, inner, data[0].value if data else None),
        )

    def _check_leaf(self, event: CallEvent, factory: cst.Call, made_by: str) -> None:
        """``torch.ones(2, requires_grad=True).to(device)``: the factory made a leaf that
        requires grad on the host (no ``device=``); moving or casting it returns a copy that is
        no leaf - the leaf the code asked for is thrown away, the copy's ``.grad`` stays None, and
        an optimizer handed it raises "can't optimize a non-leaf Tensor". On a CPU run ``.to()``
        returns the leaf itself, so only a GPU run fails."""
        asked = keyword_arg(factory, "requires_grad")
        if asked is None or not (isinstance(asked.value, cst.Name) and asked.value.value == "True"):
            return
        if keyword_arg(factory, "device") is not None:
            return
        if event.method == "to" and not any(
            arg.keyword is not None and arg.keyword.value == "device" or value.kind in (Kind.DEVICE, Kind.STR)
            for arg, value in event.args
        ):
            return  # `.to(torch.float32)`: a cast, which may change nothing; a move is what copies for sure
        leaf = made_by.rsplit(".", 1)[-1]
        self.ctx.report(
            event.node,
            f"`.{event.method}()` on a tensor `torch.{leaf}` made with `requires_grad=True` returns a copy that is not a "
            "leaf: its `.grad` stays None and an optimizer refuses it (\"can't optimize a non-leaf Tensor\"); "
            f"create it where it belongs (`torch.{leaf}(..., device=..., requires_grad=True)`)",
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
