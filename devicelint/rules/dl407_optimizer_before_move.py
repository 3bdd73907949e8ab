from __future__ import annotations

from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.helpers import argument_parameters
from devicelint.analysis.names import dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules._optimizer_order import BuiltBeforeMove, LoadedInHelper, OptimizerOrderRule, OrderCase, first_method_call
from devicelint.rules.base import Example


class OptimizerBeforeMove(OptimizerOrderRule):
    """
    ## What it does
    Flags an optimizer built from `model.parameters()` (or from parameter groups of them) before
    `model.cuda()` / `model.to(...)` when that order leaves optimizer state on the CPU:
    - its state is restored before the move - `opt.load_state_dict(...)` here, in a function of
      the file it is handed to, or in a method of an object that keeps it
      (`Checkpoint(net, opt).load()`); a load in another function is reported at the load as
      well;
    - it is an optimizer that creates its state in its constructor (`torch.optim.Adagrad`).

    The first `step()` of such an optimizer after the move - in the same function, or in a
    function of the file the optimizer is handed to after the move (`train_epoch(model, loader,
    optimizer)`) - is reported as well: that is where the run fails, and the traceback points
    there; the message names the construction and the move.

    The move is followed as DL409 follows it: in the same function, in a function the model is
    handed to, in the `__init__` of a class of the file (or a base class's, through
    `super().__init__(...)`), or in a method of a class whose `__init__` built the optimizer
    over `self.network` (`trainer.cuda()`); a model rebound to its parallel wrapper before the
    move (`model = nn.DataParallel(model)`, then `model.cuda()`) is the same model. Parameter
    groups built one parameter at a time (`for name, p in model.named_parameters():
    groups.append({"params": [p], ...})`) are that model's. A function that moves the restored state itself
    (`for state in opt.state.values(): ... v.to(device)`) takes care of it: nothing is reported.
    An optimizer that creates its state at its first `step()` (SGD, Adam, AdamW, RMSprop, ...)
    built before the move, with nothing restored, works; that order is DL409's advice.

    ## Why is this bad?
    `Module.to()` / `.cuda()` keep each parameter object and move its data, but not the
    optimizer's state. `load_state_dict` casts the restored state to the device the parameters
    have at that moment, the CPU, and `Adagrad.__init__` creates its `sum` accumulators there
    too: after the move the gradients are on the GPU and the state is not, and the first
    `optimizer.step()` fails with "Expected all tensors to be on the same device".

    ## Example
    ```python
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    ```

    ## Use instead
    ```python
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    ```
    """

    code = "DL407"
    name = "optimizer-before-move"
    severity = Severity.ERROR
    summary = "Optimizer state restored (or made by Adagrad) before the model is moved stays on the CPU: the first `step()` fails."
    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.cuda()\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)\n",
        # an optimizer that makes its state at the first step, nothing restored: it works (DL409's advice)
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nmodel.cuda()\n",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)\nother.cuda()\n",
        # moved first; moved back and forth around a CPU checkpoint later (pytorch/examples fast_neural_style)
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "net = torch.nn.Linear(2, 2).to(device)\nopt = torch.optim.Adagrad(net.parameters())\n"
        "net.eval().cpu()\nnet.to(device).train()\n",
        # the helper moves the model before the optimizer is built
        "import torch\ndef place(model):\n    return model.cuda()\n"
        "model = torch.nn.Linear(2, 2)\nplace(model)\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)\n",
        # the name is rebound to another model before the move
        "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)\n"
        "model = torch.nn.Linear(4, 4)\nmodel.cuda()\n",
        # a plain class whose `cuda()` builds the optimizer again after moving the network
        "import torch\nclass Trainer:\n    def __init__(self):\n        self.net = torch.nn.Linear(2, 2)\n"
        "        self.opt = torch.optim.Adagrad(self.net.parameters(), lr=0.1)\n"
        "    def cuda(self):\n        self.net.cuda()\n        self.opt = torch.optim.Adagrad(self.net.parameters(), lr=0.1)\n"
        "trainer = Trainer()\ntrainer.cuda()\n",
        # the class's `cuda()` exists but nothing calls it
        "import torch\nclass Trainer:\n    def __init__(self):\n        self.net = torch.nn.Linear(2, 2)\n"
        "        self.opt = torch.optim.Adagrad(self.net.parameters(), lr=0.1)\n"
        "    def cuda(self):\n        self.net.cuda()\ntrainer = Trainer()\n",
        # the trainer class takes the model but never moves it (its base class moves another argument)
        "import torch\nclass Base:\n    def __init__(self, model, loss):\n        self.model = model\n        self.loss = loss.cuda()\n"
        "class Trainer(Base):\n    def __init__(self, model, loss):\n        super().__init__(model, loss)\n"
        "model = torch.nn.Linear(2, 2)\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)\n"
        "trainer = Trainer(model, torch.nn.MSELoss())\n",
        # the optimizer's state is loaded after the model is moved
        "import torch\ndef resume(path, model, opt):\n    ckpt = torch.load(path, map_location='cpu')\n"
        "    model.load_state_dict(ckpt['model'])\n    opt.load_state_dict(ckpt['opt'])\n"
        "model = torch.nn.Linear(2, 2).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nresume('c.pt', model, opt)\n",
        # the loading helper moves the restored state itself (bohaohuang/mrs#47's fix)
        "import torch\ndef resume(path, model, opt, device):\n    ckpt = torch.load(path, map_location='cpu')\n"
        "    opt.load_state_dict(ckpt['opt'])\n    for state in opt.state.values():\n"
        "        for k, v in state.items():\n            if torch.is_tensor(v):\n                state[k] = v.to(device)\n"
        "model = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "resume('c.pt', model, opt, 'cuda')\nmodel.cuda()\n",
        # steps of an optimizer built after the move, and of another optimizer handed to the
        # same helper
        "import torch\ndef fit(net, opt):\n    opt.step()\n"
        "def main(path):\n    net = torch.nn.Linear(2, 2)\n    old = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "    net.cuda()\n    opt = torch.optim.SGD(net.parameters(), lr=0.1)\n    opt.load_state_dict(torch.load(path))\n"
        "    fit(net, opt)\n    opt.step()\n",
        # groups from a helper that does not walk the module it is handed, and groups of a
        # model moved first
        "import torch\nfrom torch import nn\ndef lookup(module, table):\n    return table[module]\n"
        "def weights(module):\n    return [m.weight for m in module.modules()]\n"
        "def main(state, table):\n    net = nn.Linear(2, 2)\n    opt = torch.optim.Adam([{'params': lookup(net, table)}])\n"
        "    opt.load_state_dict(state)\n    net.cuda()\n    other = nn.Linear(2, 2).cuda()\n"
        "    opt2 = torch.optim.Adam([{'params': weights(other)}])\n    opt2.load_state_dict(state)\n    other.cuda()\n",
        # parameter groups of two different models
        "import torch\na = torch.nn.Linear(2, 2)\nb = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.Adagrad([{'params': a.parameters()}, {'params': b.parameters(), 'lr': 0.01}], lr=0.1)\na.cuda()\n",
    )
    invalid = (
        # Adagrad makes its `sum` accumulators in `__init__`, on the CPU
        Example(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nopt = torch.optim.Adagrad(model.parameters(), lr=0.1)  # expect: DL407\n"
            "model.cuda()\n"
        ),
        Example(
            "import torch\nfrom torch import optim\ndef train(model, optimizer):\n    model = model.cuda()\n    optimizer.step()\n"
            "model = torch.nn.Linear(2, 2)\nopt = optim.Adagrad(model.parameters(), lr=0.1)  # expect: DL407\n"
            "train(model, opt)\n"
        ),
        # restored in the same function: one finding, the load its related location
        Example(
            "import torch\ndef build(path, device):\n    model = torch.nn.Linear(2, 2)\n"
            "    opt = torch.optim.Adam(model.parameters())  # expect: DL407\n"
            "    opt.load_state_dict(torch.load(path, map_location='cpu'))\n    model.to(device)\n    return model, opt\n"
        ),
        # the optimizer's state is restored by a helper before the model is moved: the state
        # stays on the CPU (bohaohuang/mrs#47); groups a method of the model returns
        Example(
            "import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.enc = torch.nn.Linear(2, 2)\n    def groups(self, lr):\n"
            "        return [{'params': self.enc.parameters(), 'lr': lr}]\n"
            "def resume(path, model, opt):\n    ckpt = torch.load(path, map_location='cpu')\n"
            "    model.load_state_dict(ckpt['model'])\n    opt.load_state_dict(ckpt['opt'])  # expect: DL407\n"
            "model = Net()\nopt = torch.optim.Adam(model.groups(1e-3))  # expect: DL407\n"
            "resume('c.pt', model, opt)\nmodel.cuda()\n"
        ),
        # the first step after the move, here or in a function the optimizer is handed to, is
        # where the run fails: it is reported too (microsoft/Cream#2)
        Example(
            "import torch\ndef fit(net, batches, opt):\n    for x in batches:\n        net(x).sum().backward()\n"
            "        opt.step()  # expect: DL407\n        opt.zero_grad()\n"
            "def main(path, batches):\n    net = torch.nn.Linear(2, 2)\n"
            "    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)  # expect: DL407\n"
            "    opt.load_state_dict(torch.load(path, map_location='cpu'))\n    opt.step()\n    net.cuda()\n"
            "    fit(net, batches, opt)\n    opt.step()\n"
        ),
        # parameter groups that a function of the file takes from submodules of one model, and
        # the model moved with its DataParallel wrapper (lightweight-human-pose-estimation#208)
        Example(
            "import torch\nfrom torch import nn\ndef weights(module):\n"
            "    return [m.weight for m in module.modules() if isinstance(m, nn.Linear)]\n"
            "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body, self.head = nn.Linear(2, 2), nn.Linear(2, 2)\n"
            "def main(state):\n    net = Net()\n"
            "    opt = torch.optim.Adam([{'params': weights(net.body)}, {'params': weights(net.head), 'lr': 0.1}])  # expect: DL407\n"
            "    opt.load_state_dict(state)\n    net = nn.DataParallel(net).cuda()  # noqa: DL405\n    return net, opt\n"
        ),
        # an object that keeps the optimizer restores its state before the move (cv-lee/BraTs#10)
        Example(
            "import torch\nclass Checkpoint:\n    def __init__(self, model, optimizer):\n"
            "        self.model = model\n        self.optimizer = optimizer\n    def load(self, path):\n"
            "        state = torch.load(path, map_location='cpu')\n        self.model.load_state_dict(state['model'])\n"
            "        self.optimizer.load_state_dict(state['opt'])  # expect: DL407\n"
            "net = torch.nn.Linear(2, 2)\nopt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)  # expect: DL407\n"
            "Checkpoint(net, opt).load('c.pt')\nckpt = Checkpoint(net, opt)\nckpt.load('c.pt')\nnet.cuda()\n"
        ),
        # a plain class builds the optimizer (one per branch) and restores its state in
        # `__init__`; its `cuda()`, called afterwards, moves the network (namisan/mt-dnn#40)
        Example(
            "import torch\nclass Trainer:\n    def __init__(self, kind, state=None):\n        self.net = torch.nn.Linear(2, 2)\n"
            "        if kind == 'sgd':\n            self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)  # expect: DL407\n"
            "        else:\n            self.opt = torch.optim.Adam(self.net.parameters())  # expect: DL407\n"
            "        if state:\n            self.opt.load_state_dict(state)\n"
            "    def cuda(self):\n        self.net.cuda()\ntrainer = Trainer('sgd', {})\ntrainer.cuda()\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: call nodes in the order the analysis met them (the first time)
        self._order_seen: dict[int, int] = {}
        #: (function node id, name) -> [(its call order, the optimizer's constructor)]: the
        #: optimizers a name was bound to
        self._bindings: dict[tuple[int, str], list[tuple[int, int]]] = {}
        #: optimizer constructor -> the function node id and the name it was bound to first
        self._bound_to: dict[int, tuple[int, str]] = {}
        #: per function node id: `<name>.step()` calls, and calls of functions of the file, in order
        self._steps: dict[int, list[tuple[int, str, cst.Call]]] = {}
        self._handed: dict[int, list[tuple[int, cst.FunctionDef, CallEvent]]] = {}
        #: the crashing cases, for the step that fails: (constructor, move, why)
        self._crashing: list[tuple[cst.Call, cst.Call, str]] = []

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        super().on_assign(statement, target, value_node, value)
        name = dotted_name(target)
        if name is not None and value.kind == Kind.OPTIMIZER and isinstance(value_node, cst.Call):
            scope = id(self.ctx.current_function.node)
            self._bindings.setdefault((scope, name), []).append((self._order_seen.get(id(value_node), len(self._order_seen)), id(value_node)))
            self._bound_to.setdefault(id(value_node), (scope, name))

    def on_call(self, event: CallEvent) -> None:
        order = self._order_seen.setdefault(id(event.node), len(self._order_seen))
        super().on_call(event)
        scope = id(self.ctx.current_function.node)
        func = event.node.func
        if event.method == "step" and isinstance(func, cst.Attribute):
            name = dotted_name(func.value)
            if name is not None:
                self._steps.setdefault(scope, []).append((order, name, event.node))
        elif event.callee.kind == Kind.FUNCTION and isinstance(event.callee.info, cst.FunctionDef):
            self._handed.setdefault(scope, []).append((order, event.callee.info, event))

    def finish(self) -> None:
        super().finish()
        for optimizer, move, why in self._crashing:
            step = self._first_step_after(optimizer, move)
            if step is None:
                continue
            self.ctx.report(
                step,
                f"this step fails on a GPU: the optimizer built at line {self.ctx.line(optimizer)} {why}, and its model "
                f"was moved only afterwards (line {self.ctx.line(move)}); the state stays on the CPU and meets the gradients on "
                "the GPU here (\"Expected all tensors to be on the same device\"); move the model before building the "
                "optimizer and restoring its state",
                related=((optimizer, "the optimizer is built here"), (move, "the model is moved here")),
            )

    def _first_step_after(self, optimizer: cst.Call, move: cst.Call) -> Optional[cst.Call]:
        """The first `step()` of the optimizer built at ``optimizer`` after ``move``: in the
        function that binds it to a name, or in a function of the file that name is handed to
        after the move (its parameter's `step()`)."""
        bound = self._bound_to.get(id(optimizer))
        moved_at = self._order_seen.get(id(move))
        if bound is None or moved_at is None:
            return None
        scope, name = bound
        bindings = self._bindings.get(bound, [])

        def holds_it(order: int) -> bool:
            latest = max((binding for binding in bindings if binding[0] < order), default=None)
            return latest is not None and latest[1] == id(optimizer)

        found: list[tuple[int, cst.Call]] = [
            (order, call) for order, receiver, call in self._steps.get(scope, ()) if order > moved_at and receiver == name and holds_it(order)
        ]
        for order, function, event in self._handed.get(scope, ()):
            if order <= moved_at or not holds_it(order) or any(earlier < order for earlier, _ in found):
                continue
            for (arg, _), parameter in zip(event.args, argument_parameters(function, event.args, skip_first=False)):
                if parameter is not None and dotted_name(arg.value) == name:
                    step = first_method_call(function, parameter, "step")
                    if step is not None:
                        found.append((order, step))
                        break
        return min(found, key=lambda item: item[0])[1] if found else None

    def _report(self, case: OrderCase) -> None:
        """The cases whose state stays on the CPU; an optimizer that makes its state at its
        first step, with nothing restored, is DL409's."""
        line = self.ctx.line
        if isinstance(case, LoadedInHelper):
            self.ctx.report(
                case.load,
                f"the optimizer's state is loaded here while `{case.owner}` is still on the CPU, and `{case.owner}` is "
                f"moved afterwards (line {line(case.move)}): `load_state_dict` puts the state on the parameters' "
                "device of this moment, the move leaves it there, and the first `step()` mixes CPU state with GPU "
                "gradients; move the model before loading the optimizer's state",
                related=((case.move, f"`{case.owner}` is moved here"), (case.optimizer, "the optimizer is built here")),
            )
            return
        assert isinstance(case, BuiltBeforeMove)
        related = [(case.move, case.move_note)]
        if case.state_load is not None and case.state_load.same_function:
            related.append((case.state_load.call, "its state is loaded here, onto the CPU, and stays there after the move"))
            why = f"its state is restored before the move (line {line(case.state_load.call)})"
        elif case.state_load is not None:
            function = case.state_load.function
            called = f" in `{function.name.value}()`" if function is not None else ""
            why = f"its state is restored before the move (line {line(case.state_load.call)}{called})"
        elif case.eager_state is not None:
            why = f"`{case.eager_state}` creates its state in its constructor, next to the parameters"
        else:
            return
        self._crashing.append((
            case.optimizer, case.move,
            f"is `{case.eager_state}`, which creates its state in its constructor" if case.state_load is None
            else f"had its state restored before the move (line {line(case.state_load.call)})",
        ))
        self.ctx.report(
            case.optimizer,
            f"{case.described}, and {why}: the move leaves that state on the CPU, and the first `step()` mixes "
            "it with the gradients on the GPU; move the model first, then build the optimizer",
            related=tuple(related),
        )
