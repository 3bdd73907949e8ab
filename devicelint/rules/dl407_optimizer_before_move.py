from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.helpers import argument_parameters
from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule


class OptimizerBeforeMove(Rule):
    """
    ## What it does
    Flags an optimizer built from `model.parameters()` when `model.cuda()` / `model.to(...)`
    comes after it in the same function (or at module level). The finding sits on the
    optimizer, the line to change; the move is its related location.

    ## Why is this bad?
    PyTorch's `Module.cuda` documentation: "This also makes associated parameters and buffers
    different objects. So it should be called before constructing the optimizer if the module
    will live on GPU while being optimized." Optimizer state created or loaded before the move
    stays on the CPU, and code that swaps parameters on conversion leaves the optimizer updating
    tensors the model no longer uses.

    ## Example
    ```python
    optimizer = torch.optim.Adam(model.parameters())
    model.to(device)
    ```

    ## Use instead
    ```python
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters())
    ```
    """

    code = "DL407"
    name = "optimizer-before-move"
    severity = Severity.WARNING
    summary = "An optimizer built from `model.parameters()` before the model is moved."
    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nother.cuda()\n",
        # moved first; moved back and forth around a CPU checkpoint later (pytorch/examples fast_neural_style)
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "net = torch.nn.Linear(2, 2).to(device)\nopt = torch.optim.Adam(net.parameters())\n"
        "net.eval().cpu()\nnet.to(device).train()\n",
        # the helper moves the model before the optimizer is built
        "import torch\ndef place(model):\n    return model.cuda()\n"
        "model = torch.nn.Linear(2, 2)\nplace(model)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n",
        # the name is rebound to another model before the move
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "model = torch.nn.Linear(4, 4)\nmodel.cuda()\n",
    )
    invalid = (
        Example(
            "import torch\ndef train(model, optimizer):\n    model = model.cuda()\n    optimizer.step()\n"
            "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: DL407\n"
            "train(model, opt)\n"
        ),
        Example(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)  # expect: DL407\n"
            "model.cuda()\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: (function node, module expression) -> the optimizer's constructor
        self._optimized: dict[tuple[int, str], cst.Call] = {}

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        name = dotted_name(target)
        if name is not None:
            # the name now holds another model: a later move is not of the optimized one
            self._optimized.pop((id(self.ctx.current_function.node), name), None)

    def on_call(self, event: CallEvent) -> None:
        scope = id(self.ctx.current_function.node)
        if event.result.kind == Kind.OPTIMIZER and event.args:
            first = event.args[0][0].value
            if isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute) and first.func.attr.value in ("parameters", "named_parameters"):
                owner = dotted_name(first.func.value)
                parameters = event.args[0][1]
                model = parameters.info if parameters.kind == Kind.PARAMETERS and isinstance(parameters.info, Value) else None
                already_placed = model is not None and model.device is not None and model.device.may_be_accelerator
                if owner is not None and not already_placed:
                    self._optimized[(scope, owner)] = event.node
            elif event.callee.kind == Kind.FUNCTION and isinstance(event.result.info, Value) and event.result.info.kind == Kind.PARAMETERS:
                # `build_optimizer(model, lr)`: a helper (of this file or another module of the
                # project) that builds it from the parameters of a model handed to it
                for arg, value in event.args:
                    owner = dotted_name(arg.value)
                    placed = value.device is not None and value.device.may_be_accelerator
                    if owner is not None and value.kind == Kind.MODULE and not placed:
                        self._optimized[(scope, owner)] = event.node
            return
        if event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._handed_to_mover(scope, event, event.callee.info)
            return
        if event.method not in ("cuda", "to") or event.receiver is None or event.receiver.kind != Kind.MODULE:
            return
        if event.result.device is None or not event.result.device.may_be_accelerator:
            return
        func = event.node.func
        assert isinstance(func, cst.Attribute)
        owner = dotted_name(func.value)
        optimizer = self._optimized.pop((scope, owner or ""), None)
        if optimizer is not None:
            # the line to change is the optimizer's: report there, and point at the move
            self.ctx.report(
                optimizer,
                f"this optimizer is built from `{owner}.parameters()` before `{owner}` is moved "
                f"(line {self.ctx.line(event.node)}); move the model first, then build the optimizer",
                related=((event.node, f"`{owner}` is moved here"),),
            )

    def _handed_to_mover(self, scope: int, event: CallEvent, function: cst.FunctionDef) -> None:
        """``train(model, loader, optimizer)`` where ``train`` moves ``model`` (``model.cuda()``)
        after the optimizer was built here: the same bug, with the move one call away."""
        names = argument_parameters(function, event.args, skip_first=False)
        for (arg, value), parameter in zip(event.args, names):
            owner = dotted_name(arg.value)
            if parameter is None or owner is None or value.kind != Kind.MODULE:
                continue
            optimizer = self._optimized.get((scope, owner))
            if optimizer is None:
                continue
            # moved to an accelerator there (not `.cpu()`, not merely handed on)
            if re.search(rf"\b{re.escape(parameter)}\s*\.\s*(cuda|to)\s*\(", self.ctx.analyzer.body_text(function)):
                del self._optimized[(scope, owner)]
                self.ctx.report(
                    optimizer,
                    f"this optimizer is built from `{owner}.parameters()` before `{function.name.value}()` "
                    f"moves `{owner}` (called at line {self.ctx.line(event.node)}); move the model first, "
                    "then build the optimizer",
                    related=((event.node, f"`{function.name.value}()` moves `{owner}`"),),
                )
