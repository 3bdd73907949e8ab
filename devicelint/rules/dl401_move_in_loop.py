from __future__ import annotations

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo, LoopInfo
from devicelint.analysis.names import NamesRead, bound_names, dotted_name
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_MOVES = frozenset({"to", "cuda", "cpu"})
#: calls that keep the tensor they are handed (in a module, a container or an attribute)
_KEEPING_CALLS = frozenset({"register_buffer", "register_parameter", "append", "insert", "appendleft", "add", "setattr", "Parameter"})
_NOT_CONSTANT = frozenset({"rand", "randn", "randint", "randperm", "normal", "bernoulli", "empty", "empty_strided"})


def _free_names(call: cst.Call) -> set[str]:
    """Names the call's arguments read, dotted ones with their head (``self.x`` -> ``self``)."""
    reads = NamesRead()
    for arg in call.args:
        walk.visit(arg.value, reads)
    names: set[str] = set()
    for node in reads.nodes:
        name = dotted_name(node)
        if name is not None:
            names.add(name)
            names.add(name.split(".")[0])
    return names


class MoveInLoop(Rule):
    """
    ## What it does
    Flags loop-invariant moves inside a `for`/`while` body: moving a model or criterion that the
    loop does not change, copying a tensor that was defined before the loop and is not
    reassigned or modified in it, and building a constant on the CPU only to copy it
    (`torch.tensor([...]).cuda()`; random factories such as `torch.randn` give new data each
    call and are not constants). Moving each batch is necessary and never flagged; nor is an
    object the loop shuttles between devices on purpose, a tensor built from what another object
    answers this time (`torch.as_tensor(env.reset()).cuda()`), nor a fresh copy the loop then
    writes into, carries forward or keeps in an entry of a container or hands to a call that keeps
    it (`mask[:i] = False`, `states = step(states)`, `state["step"] = torch.tensor(0.0).cuda()`,
    `self.register_buffer(f"b{i}", torch.zeros(3).cuda())`, `kept.append(...)`): hoisting would
    share one tensor between iterations, and DL402 (create it with `device=`) is the fix there.
    A model the loop grows - it calls a method of the model's class that builds new
    submodules into it (`self.fc = nn.Linear(...)`, `self.heads.append(Head())`) - changes
    there: the move in each iteration places the new, CPU-born layers.

    ## Why is this bad?
    Each iteration pays a host-to-device copy (and for a module a walk over all its parameters)
    that produces the same result as the iteration before. In a training loop that is one
    avoidable synchronising transfer per step.

    ## Example
    ```python
    for x, y in loader:
        model.to(device)
        w = class_weights.to(device)
        loss = F.cross_entropy(model(x.to(device)), y.to(device), weight=w)
    ```

    ## Use instead
    ```python
    model.to(device)
    w = class_weights.to(device)
    for x, y in loader:
        loss = F.cross_entropy(model(x.to(device)), y.to(device), weight=w)
    ```
    """

    code = "DL401"
    name = "move-in-loop"
    severity = Severity.WARNING
    summary = "A loop-invariant move (model, criterion, constant tensor) repeated in every iteration."
    valid = (
        # a property's getter makes a fresh sample at each read (diffusers' scheduler tests)
        "import torch\nclass T:\n    @property\n    def dummy_sample(self):\n        return torch.rand(4, 3)\n"
        "    def test(self, device):\n        for _ in range(3):\n            sample = self.dummy_sample.to(device)\n",
        "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\nfor x, y in torch.utils.data.DataLoader(ds):\n"
        "    x = x.cuda()\n    y = y.cuda()\n    out = model(x)\n",
        "import torch\nfor name in names:\n    model = torch.nn.Linear(2, 2)\n    model.cuda()\n",
        # shuttled to the host for a checkpoint and back (pytorch/examples fast_neural_style)
        "import torch\nnet = torch.nn.Linear(2, 2).cuda()\nfor step in range(10):\n    if step % 5 == 0:\n"
        "        net.eval().cpu()\n        torch.save(net.state_dict(), 'ckpt.pt')\n        net.to('cuda').train()\n",
        # a dtype conversion, not a move (diffusers' LCM training scripts)
        "import torch\nvae = torch.nn.Linear(2, 2).cuda()\nfor step in range(10):\n    vae.to(dtype=torch.float16)\n",
        "import torch\nw = torch.ones(3)\nfor step in range(10):\n    w.add_(1)\n    g = w.cuda()\n",
        "import torch\nmodel = torch.nn.Linear(2, 2)\nfor step in range(3):\n    model.cuda()\n    model.cpu()\n",
        "import torch\ndef f(t):\n    for i in range(3):\n        u = t.cuda()\n",
        # built from what the environment answers this time: not a constant
        "import torch\nfor episode in range(10):\n    state = torch.as_tensor(env.reset()).cuda()\n",
        "import torch\nfor step in range(10):\n    x = torch.randn(200, 28, generator=g).to('cuda')\n",
        "import torch\ntemplate = torch.zeros(4)\nfor p in params:\n    state = states[p]\n    avg = template.to(state['avg'].device)\n",
        # an optimizer's per-parameter state: each entry needs a tensor of its own (Adam-mini)
        "import torch\nfor p in params:\n    state = opt.state[p]\n    if len(state) == 0:\n"
        "        state['vmean'] = torch.tensor(0.0).to(device)\n    state['vmean'].mul_(0.9)\n",
        # a network that grows a new CPU head in each task: the move places it (PyCIL)
        "import torch\nfrom torch import nn\nclass Grow(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.heads = nn.ModuleList()\n    def add_task(self, n):\n        self.heads.append(nn.Linear(8, n))\n"
        "net = Grow()\nfor n in (2, 3):\n    net.add_task(n)\n    net.to('cuda')\n",
    )
    invalid = (
        Example(
            "import torch\nmodel = torch.nn.Linear(2, 2)\nfor x, y in torch.utils.data.DataLoader(ds):\n"
            "    model.cuda()  # expect: DL401\n    out = model(x.cuda())\n"
        ),
        Example(
            "import torch\nweights = torch.tensor([1.0, 2.0])\nfor epoch in range(10):\n"
            "    w = weights.to('cuda')  # expect: DL401\n"
        ),
        Example("import torch\nwhile True:\n    scale = torch.tensor([0.5, 2.0]).cuda()  # expect: DL401\n"),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: calls that answer new data each time (``env.reset()``, ``queue.get()``, ``next(it)``)
        self._fresh_calls: set[int] = set()

    def on_call(self, event: CallEvent) -> None:
        if self.ctx.loop_stack and _answers_new_data(event):
            self._fresh_calls.add(id(event.node))
        if event.method not in _MOVES or not self.ctx.loop_stack or event.receiver is None:
            return
        loop = self.ctx.loop_stack[-1]
        assert isinstance(event.node.func, cst.Attribute)
        receiver_node = event.node.func.value
        receiver = event.receiver
        target = event.result.device
        if not self._target_invariant(event.node, loop):
            return  # moved somewhere else each time (a per-item device): not a repeated copy
        if receiver.kind in (Kind.MODULE, Kind.CRITERION):
            if event.method == "to" and not _names_a_device(event.node):
                return  # `vae.to(dtype=...)`: a conversion, not a move
            if self._invariant(receiver_node, loop) and not self._shuttled(receiver_node, loop) and not self._grown(receiver_node, receiver, loop):
                what = "model" if receiver.kind == Kind.MODULE else "criterion"
                self._report(event, loop, f"the {what} `{self.ctx.source_of(receiver_node)}`")
            return
        if receiver.kind != Kind.TENSOR or target is None or receiver.device is None or not receiver.device.conflicts_with(target):
            return
        if isinstance(receiver_node, cst.Call):
            if self._constant_factory(receiver_node, receiver, loop):
                self._report(event, loop, f"the constant `{self.ctx.source_of(receiver_node)}`, built on the CPU,")
            return
        if self.ctx.analyzer.reads_a_property(receiver_node, event.state):
            return  # a property's getter runs at each read: it may answer a new tensor each time
        if self._invariant(receiver_node, loop) and not self._shuttled(receiver_node, loop):
            self._report(event, loop, f"`{self.ctx.source_of(receiver_node)}`, which the loop does not change,")

    def _report(self, event: CallEvent, loop: LoopInfo, what: str) -> None:
        self.ctx.report(
            event.node,
            f"{what} is moved in every iteration of the loop at line {self.ctx.line(loop.node)}; "
            "move it once, before the loop",
        )

    @staticmethod
    def _target_invariant(call: cst.Call, loop: LoopInfo) -> bool:
        return not (_free_names(call) & loop.assigned)

    @staticmethod
    def _invariant(receiver_node: cst.BaseExpression, loop: LoopInfo) -> bool:
        name = dotted_name(receiver_node)
        if name is None:
            return False
        parts = name.split(".")
        prefixes = {".".join(parts[: index + 1]) for index in range(len(parts))}
        if parts[0] == "self" and len(parts) > 1:
            prefixes.discard("self")
        return not (prefixes & loop.assigned)

    def _shuttled(self, receiver_node: cst.BaseExpression, loop: LoopInfo) -> bool:
        """The loop moves this object to more than one place: deliberate offloading."""
        finder = _MoveTargets(dotted_name(receiver_node) or "")
        walk.visit(loop.node, finder)
        return len(finder.targets) > 1

    def _grown(self, receiver_node: cst.BaseExpression, receiver: Value, loop: LoopInfo) -> bool:
        """Does the loop call a method of the module (a class of the file) that gives it new
        submodules (``self.fc = nn.Linear(...)``, ``self.blocks.append(Block())``)? They are
        built on the CPU, so the move in each iteration is what places them (a network that
        grows a head per task in continual learning)."""
        info = receiver.info
        name = dotted_name(receiver_node)
        if not isinstance(info, ClassInfo) or name is None:
            return False
        calls = _MethodsCalledOn(name)
        walk.visit(loop.node, calls)
        for method in calls.methods:
            found = info.find_method(method)
            if found is not None and self._adds_submodule(found[0]):
                return True
        return False

    def _adds_submodule(self, method: cst.FunctionDef) -> bool:
        params = method.params.params
        if not params:
            return False
        finder = _BuiltSubmodules(params[0].name.value)
        walk.visit(method.body, finder)
        state = self.ctx.analyzer.module_state
        for built, spelled in finder.built:
            value = self.ctx.analyzer.lookup(spelled.split(".", 1)[0], state)
            if value.kind == Kind.CLASS and isinstance(value.info, ClassInfo) and value.info.is_module:
                return True
            qualname = self.ctx.analyzer.qualname_of(built, state) or ""
            leaf = qualname.rsplit(".", 1)[-1]
            if qualname.startswith("torch.nn.") and leaf[:1].isupper() and ".functional." not in qualname:
                return True
        return False

    def _constant_factory(self, call: cst.Call, receiver: Value, loop: LoopInfo) -> bool:
        if receiver.origin is None or receiver.origin.node is not call:
            return False
        if self.ctx.analyzer.device_less_factory(receiver) is None:
            return False  # made by a conversion of loop data (`x.type(torch.FloatTensor)`), not a factory
        spelled = dotted_name(call.func) or ""
        if spelled.rsplit(".", 1)[-1] in _NOT_CONSTANT:
            return False  # fresh random (or uninitialised) data each call: not loop-invariant
        if any(id(inner) in self._fresh_calls for inner in _calls_inside(call)):
            return False  # built from what another object answers this time (`env.reset()`)
        if _free_names(call) & loop.assigned:
            return False
        # a fresh copy each iteration is the point when the loop then writes into it
        # (`mask[:i] = False`) or carries it forward (`states = step(states)`): hoisting would
        # share one tensor between iterations; creating it with `device=` (DL402) is the fix
        return not _changed_after_binding(call, loop)


def _answers_new_data(event: CallEvent) -> bool:
    """A call whose result may differ each time although its arguments do not: a method of an
    object the analysis does not know (an environment, a queue, a reader), or ``next(...)``."""
    if event.qualname is not None:
        return event.qualname in ("next", "builtins.next", "input", "builtins.input")
    receiver = event.receiver
    return event.method is not None and receiver is not None and receiver.kind == Kind.UNKNOWN and not receiver.is_tensor_like


class _CallsInside(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def _calls_inside(call: cst.Call) -> list[cst.Call]:
    """The calls made while computing ``call``'s arguments."""
    finder = _CallsInside()
    for arg in call.args:
        walk.visit(arg.value, finder)
    return finder.calls


class _BindingOf(cst.CSTVisitor):
    """The names an assignment binds to the value holding ``call`` (``m = torch.ones(n).cuda()``,
    ``states = (torch.zeros(n).cuda(), ...)``)."""

    def __init__(self, call: cst.CSTNode) -> None:
        self.call = call
        self.names: set[str] = set()
        self.statement: cst.CSTNode | None = None
        #: it is stored in an entry of a container (``state["vmean"] = ...``): one per iteration
        self.stored_in_entry = False

    def visit_Assign(self, node: cst.Assign) -> bool:
        if self.statement is None and walk.contains(node.value, self.call):
            self.statement = node
            for target in node.targets:
                self.names.update(bound_names(target.target))
                self.stored_in_entry = self.stored_in_entry or _has_subscript_target(target.target)
        return self.statement is None

    def visit_Call(self, node: cst.Call) -> None:
        # handed to a call that keeps it (``self.register_buffer(f"b{i}", t.cuda())``,
        # ``kept.append(t.cuda())``, ``setattr(self, name, ...)``): one tensor per iteration
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name in _KEEPING_CALLS and node is not self.call and any(walk.contains(arg.value, self.call) for arg in node.args):
            self.stored_in_entry = True


class _Changes(cst.CSTVisitor):
    """Does the loop write into one of ``names`` (``m[i] = 0``, ``m += 1``, ``m.fill_(0)``), or
    bind it again in another statement?"""

    def __init__(self, names: set[str], binding: cst.CSTNode) -> None:
        self.names = names
        self.binding = binding
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, rebinding=node is not self.binding)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, rebinding=True)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            if dotted_name(func.value) in self.names:
                self.found = True

    def _target(self, target: cst.BaseExpression, rebinding: bool) -> None:
        if isinstance(target, cst.Subscript):
            if dotted_name(target.value) in self.names:
                self.found = True
            return
        if rebinding and bound_names(target) & self.names:
            self.found = True


def _has_subscript_target(target: cst.BaseExpression) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_has_subscript_target(element.value) for element in target.elements)
    return isinstance(target, cst.Subscript)


def _changed_after_binding(call: cst.Call, loop: LoopInfo) -> bool:
    binding = _BindingOf(call)
    walk.visit(loop.node, binding)
    if binding.stored_in_entry:
        # each iteration keeps its own tensor in the container (an optimizer's per-parameter
        # state): hoisting would make every entry the same tensor
        return True
    if binding.statement is None or not binding.names:
        return False
    changes = _Changes(binding.names, binding.statement)
    walk.visit(loop.node, changes)
    return changes.found


class _MethodsCalledOn(cst.CSTVisitor):
    """The methods called on one object (``network.update_fc(n)``)."""

    def __init__(self, receiver: str) -> None:
        self.receiver = receiver
        self.methods: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and dotted_name(func.value) == self.receiver:
            self.methods.add(func.attr.value)


class _BuiltSubmodules(cst.CSTVisitor):
    """The classes a method builds into its object's attributes, as it spells them: ``self.fc =
    nn.Linear(...)``, ``self.blocks.append(Block())``, ``self.add_module("b", Block())``."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        #: the callee of each construction, with its dotted spelling
        self.built: list[tuple[cst.BaseExpression, str]] = []

    def _built(self, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Call):
            spelled = dotted_name(value.func)
            if spelled is not None:
                self.built.append((value.func, spelled))

    def visit_Assign(self, node: cst.Assign) -> None:
        if any((dotted_name(target.target) or "").startswith(self.owner + ".") for target in node.targets):
            self._built(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        spelled = dotted_name(func.value) if isinstance(func, cst.Attribute) else None
        if spelled is None or not (spelled == self.owner or spelled.startswith(self.owner + ".")):
            return
        assert isinstance(func, cst.Attribute)
        if func.attr.value in ("append", "add_module", "register_module", "insert") and node.args:
            self._built(node.args[-1].value)


class _MoveTargets(cst.CSTVisitor):
    def __init__(self, receiver: str) -> None:
        self.receiver = receiver
        self.targets: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in api.MOVE_METHODS and dotted_name(_without_mode_calls(func.value)) == self.receiver:
            spelled = func.attr.value if func.attr.value != "to" else "to:" + ",".join(
                cst.Module([]).code_for_node(arg.value) for arg in node.args if arg.keyword is None
            )
            self.targets.add(spelled)


def _names_a_device(call: cst.Call) -> bool:
    """Does ``m.to(...)`` name a device (a positional argument or ``device=``), not only a dtype?"""
    return any(arg.keyword is None and not arg.star or arg.keyword is not None and arg.keyword.value == "device" or arg.star for arg in call.args)


def _without_mode_calls(node: cst.BaseExpression) -> cst.BaseExpression:
    """``model.eval().cpu()`` moves ``model``: look through ``.eval()`` / ``.train()`` calls."""
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("eval", "train", "requires_grad_")
    ):
        node = node.func.value
    return node
