from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.rule_api import FixSpec, NodeEdit
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: the object's device methods, which an attribute of the same name shadows
_MOVE_METHODS = frozenset({"cuda", "cpu", "to"})
_BOOLEAN_PROPERTIES = frozenset({"is_cuda", "is_cpu", "is_meta", "is_mps", "is_xpu", "is_quantized", "is_sparse"})


def _plain_value(node: cst.BaseExpression, value: Value, function: cst.FunctionDef) -> bool:
    """Is ``node`` surely no callable: a literal, a truth value (a comparison, `and`/`or`/`not`,
    `torch.cuda.is_available()`), a number, string, tensor or device, or a parameter of
    ``function`` that defaults to a literal or is annotated `bool`?"""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Comparison, cst.BooleanOperation)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return True
    if isinstance(node, cst.Call) and (dotted_name(node.func) or "").endswith("is_available"):
        return True
    if value.kind in (Kind.NUMBER, Kind.STR, Kind.TENSOR, Kind.DEVICE):
        return True
    if isinstance(node, cst.Name):
        if node.value in ("True", "False", "None"):
            return True
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value != node.value:
                continue
            default = param.default
            if isinstance(default, cst.Name) and default.value in ("True", "False", "None") or isinstance(default, (cst.Integer, cst.SimpleString)):
                return True
            annotation = param.annotation
            return annotation is not None and dotted_name(annotation.annotation) == "bool"
    return False


class DevicePropertyCalled(Rule):
    """
    ## What it does
    Flags `x.is_cuda()`, `x.is_cpu()`, `x.is_meta()` (and the other `is_*` device
    properties) and `x.device()` called with no arguments on a tensor: a name the analysis knows
    holds a tensor, or a parameter annotated `torch.Tensor`. Other objects have methods of these
    names (compiler IR nodes, device wrappers), so a receiver of unknown type is left alone, as is
    a file that defines its own `is_cuda` / `device` method.

    It also flags the reverse mix-up: `self.cuda = True` (or `self.cpu`, `self.to`) set to a
    plain value in a class whose objects have that method - their own, a base's, or
    `nn.Module`'s. The instance attribute shadows the method, so the object's next
    `.cuda()` calls the flag.

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
    summary = "`x.is_cuda()`, `x.device()`: calling a tensor property raises TypeError; so does `model.cuda()` after `self.cuda = True` shadowed the method."
    fix_safety = "safe"
    valid = (
        "import torch\nx = torch.zeros(3)\nif x.is_cuda:\n    pass\n",
        "import torch\nclass Wrapper:\n    def is_cuda(self):\n        return True\nif w.is_cuda():\n    pass\n",
        "import torch\nd = accelerator.device()\n",
        "import torch\nflag = x.is_cuda(0)\n",
        # an object of unknown type with an is_cuda() method (torch._inductor's scheduler nodes)
        "import torch\ndef fuse(node1, node2):\n    return node1.is_cpu() and node2.is_cpu()\n",
        # a flag of that name on an object with no such method (a configuration object)
        "import torch\nclass Options:\n    def __init__(self):\n        self.cuda = torch.cuda.is_available()\n",
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
        Example(
            "import torch\nclass Wrapped:\n    def cuda(self):\n        self.net = self.net.cuda()\n"
            "        self.cuda = True  # expect: DL305\n        return self\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._defined: dict[str, bool] = {}

    def _file_defines(self, name: str) -> bool:
        if name not in self._defined:
            self._defined[name] = re.search(rf"\bdef\s+{name}\s*\(", self.ctx.source) is not None
        return self._defined[name]

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        """`self.cuda = True` in a class whose objects have a `cuda()` method (its own, a base's,
        or `nn.Module`'s): the instance attribute shadows the method, and the next
        `model.cuda()` calls a bool (braindecode's BaseModel)."""
        if not (isinstance(target, cst.Attribute) and target.attr.value in _MOVE_METHODS and isinstance(target.value, cst.Name)):
            return
        context = self.ctx.current_function
        function, info = context.node, context.class_info
        if function is None or info is None or not function.params.params or function.params.params[0].name.value != target.value.value:
            return
        if function.decorators:
            return  # a static or class method: the first parameter is not the object
        method = target.attr.value
        if info.find_method(method) is None and not info.is_module:
            return
        if not _plain_value(value_node, value, function):
            return  # perhaps a callable put in the method's place
        owner = "this class's" if info.find_method(method) is not None else "`nn.Module`'s"
        self.ctx.report(
            target,
            f"`{self.ctx.source_of(target)}` shadows {owner} `{method}()` method with a plain value: every later "
            f"`{method}()` call on the object calls it and raises TypeError (\"'bool' object is not callable\" for a flag); "
            f"name the flag differently (`is_{method}`)",
        )

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
