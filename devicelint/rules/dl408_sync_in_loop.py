from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import LoopInfo
from devicelint.analysis.names import keyword_arg
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: tensor methods that copy to the host and wait for the device
_SYNC_METHODS = frozenset({"item", "tolist", "cpu"})
#: builtins that read a tensor's value on the host
_SYNC_BUILTINS = frozenset({"float", "int", "bool"})


@dataclass(frozen=True)
class _Candidate:
    node: cst.CSTNode
    what: str
    #: the loops around it, outermost first
    loops: tuple[LoopInfo, ...]
    #: how much device work had been queued when it read: reads with nothing queued between
    #: them share one wait
    work: int


class SyncInLoop(Rule):
    """
    ## What it does
    Flags a host synchronisation on a tensor that may be on an accelerator, in every step of a
    training or evaluation loop: `.item()`, `.tolist()`, `.cpu()` (without
    `non_blocking=True`), `float(t)` / `int(t)` / `bool(t)`, `print(t)`, and `if t:` /
    `while t:` on such a tensor. A loop counts as per-step when it iterates a `DataLoader`
    (also through `enumerate`/`zip`), or when its own body - not a loop nested in it - calls
    `.backward()` or an optimizer's `step` (`optimizer.step()`, `scaler.step(optimizer)`). A
    sync anywhere inside such a loop runs once per step.

    Left alone: tensors known to be on the CPU (a DataLoader batch not yet moved, anything
    after `.cpu()`), tensors of unknown device, loops that are not per-step (an epoch loop that
    logs once after its inner loop), and syncs under an `if` whose test uses `%` inside the
    step loop (`if step % 100 == 0:`) or compares with a number (`if i == 0:`): the periodic
    logging idiom runs the sync every N steps, which is the advice, and the other runs once.
    Reads with no device work queued between them (a log line reading five losses) make one
    finding, at the first, with the others as related locations: once the first has drained the
    queue, the next ones cost little. Reads separated by device work (a forward, a backward)
    each wait again and are reported each.
    `.cpu()` on an object of unknown kind is not counted (it may be a model). Off by default
    (like DL314): enable with `--select DL408`. No fix: what to do instead (accumulate on the
    device, log every N steps) is the program's choice.

    ## Why is this bad?
    CUDA work is queued asynchronously: the host normally runs ahead and queues the next step
    while the GPU computes. Reading a value on the host (`.item()`, `.tolist()`, `.cpu()`,
    `print`, `float(t)`, a tensor in an `if`) blocks the host until every queued kernel has
    finished and the value is copied back, so the queue drains at every step and the GPU idles
    while the host prepares the next one. Sources, not run on a GPU here (the test machine is
    CPU-only): `torch.cuda.set_sync_debug_mode("warn")` reports "called a synchronizing CUDA
    operation" for `x.item()` (shown on the PyTorch forum) and for `if y:` on a CUDA tensor (the
    example of PyTorch commit #62092 that added the mode); torchtune measured a 40-50 ms
    `cudaStreamSynchronize` per step from `loss.item()` (meta-pytorch/torchtune#522).

    ## Example
    ```python
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
    ```

    ## Use instead
    ```python
    running_loss = torch.zeros((), device=device)
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        running_loss += loss.detach()
        if step % 100 == 0:
            print(running_loss.item() / (step + 1))
    ```
    """

    code = "DL408"
    name = "sync-in-loop"
    severity = Severity.INFO
    summary = "`.item()` / `.cpu()` / `print(t)` on an accelerator tensor in every step of a training loop: a host sync per step."
    default_enabled = False
    valid = (
        # logged every N steps
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\nmodel = nn.Linear(8, 1).to(device)\n"
        "for step, (x, y) in enumerate(DataLoader(data)):\n    loss = model(x.to(device)).sum()\n    loss.backward()\n"
        "    if step % 50 == 0:\n        print(loss.item())\n",
        # once per epoch, after the step loop
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\nmodel = nn.Linear(8, 1).to(device)\n"
        "for epoch in range(10):\n    for x, y in DataLoader(data):\n        loss = model(x.to(device)).sum()\n        loss.backward()\n"
        "    print(epoch, loss.item())\n",
        # host tensors: the batch was never moved
        "import torch\nfrom torch.utils.data import DataLoader\nfor x, y in DataLoader(data):\n    print(x.sum().item(), y.tolist())\n",
        # a loop that is no training step
        "import torch\ndevice = torch.device('cuda')\nt = torch.ones(4, device=device)\nfor i in range(4):\n    print(t[i].item())\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\ndevice = torch.device('cuda')\nmodel = nn.Linear(8, 1).to(device)\n"
            "total = 0.0\nfor x, y in DataLoader(data):\n    loss = model(x.to(device)).sum()\n    loss.backward()\n"
            "    total += loss.item()  # expect: DL408\n"
        ),
        Example(
            "import torch\nfrom torch import nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "model = nn.Linear(8, 1).to(device)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "def train(batches):\n    for x in batches:\n"
            "        out = model(x.to(device))\n        loss = out.mean()\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n        if loss < 0.1:  # expect: DL408\n            break\n"
            "        print(loss)\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._candidates: list[_Candidate] = []
        #: loops whose own body runs a backward pass or an optimizer step
        self._step_loops: set[int] = set()
        #: device work queued so far (calls onto the device, backward and optimizer steps)
        self._work = 0
        #: per loop: ids of the nodes under an ``if ... % ...:`` inside it
        self._periodic: dict[int, frozenset[int]] = {}

    def on_call(self, event: CallEvent) -> None:
        stack = self.ctx.loop_stack
        if not stack:
            return
        if _is_step(event):
            self._step_loops.add(id(stack[-1].node))
            self._work += 1
            return
        what = self._sync_of(event)
        if what is not None:
            self._candidates.append(_Candidate(event.node, what, tuple(stack), self._work))
        elif event.result.device is not None and event.result.device.may_be_accelerator:
            self._work += 1  # a call that queues work on the device (a model, a torch op)

    def on_condition(self, node: cst.BaseExpression, value: Value) -> None:
        stack = self.ctx.loop_stack
        if stack and value.is_tensor_like and _on_accelerator(value):
            self._candidates.append(_Candidate(node, f"`{self.ctx.source_of(node)}` as a condition", tuple(stack), self._work))

    def _sync_of(self, event: CallEvent) -> Optional[str]:
        node = event.node
        if event.method in _SYNC_METHODS and event.receiver is not None:
            # only a tensor (or a numpy array, never on a device) has these: an object of
            # unknown kind on a device is a moved model's output
            receiver = event.receiver
            maybe_tensor = receiver.is_tensor_like or receiver.kind == Kind.UNKNOWN and event.method != "cpu"  # a model has .cpu()
            if not (maybe_tensor and _on_accelerator(receiver)):
                return None
            if event.method == "cpu" and _non_blocking(node):
                return None
            return f"`{self.ctx.source_of(node)}`"
        func = node.func
        if not isinstance(func, cst.Name):
            return None
        if event.qualname == "print":
            if any(value.is_tensor_like and _on_accelerator(value) for _, value in event.args):
                return f"`{self.ctx.source_of(node)}` (printing a tensor reads its values)"
            return None
        if func.value in _SYNC_BUILTINS and event.callee.kind == Kind.UNKNOWN and event.callee.is_bare and len(event.args) == 1:
            value = event.args[0][1]
            if value.is_tensor_like and _on_accelerator(value):
                return f"`{self.ctx.source_of(node)}`"
        return None

    def finish(self) -> None:
        # one finding per group of reads with no device work queued between them (a log line
        # reading five losses): after the first the queue is empty, so the others cost little;
        # they are listed as related locations
        per_loop: dict[tuple[int, int], tuple[LoopInfo, list[_Candidate]]] = {}
        for candidate in self._candidates:
            loop = self._per_step_loop(candidate.loops)
            if loop is None or id(candidate.node) in self._periodic_nodes(loop):
                continue
            per_loop.setdefault((id(loop.node), candidate.work), (loop, []))[1].append(candidate)
        for loop, found in per_loop.values():
            first, others = found[0], found[1:]
            kind = "training" if id(loop.node) in self._step_loops else "data"
            more = f" (and {len(others)} more read{'s' if len(others) > 1 else ''} right after it)" if others else ""
            self.ctx.report(
                first.node,
                f"{first.what} copies to the host and waits for the device in every step of the {kind} loop "
                f"at line {self.ctx.line(loop.node)}{more}: the GPU queue drains each step; keep values on the device "
                "(`total += loss.detach()`) and read them once per epoch or every N steps",
                related=[(other.node, f"{other.what} reads on the host too") for other in others],
            )

    def _per_step_loop(self, loops: tuple[LoopInfo, ...]) -> Optional[LoopInfo]:
        """The innermost loop around a sync that runs once per step, if any."""
        for loop in reversed(loops):
            if id(loop.node) in self._step_loops or self._iterates_data(loop):
                return loop
        return None

    def _iterates_data(self, loop: LoopInfo) -> bool:
        iterable = loop.iterable
        if iterable is None:
            return False
        if iterable.kind == Kind.LOADER:
            return True
        return _holds_batch(self.ctx.analyzer.element_of(iterable))

    def _periodic_nodes(self, loop: LoopInfo) -> frozenset[int]:
        key = id(loop.node)
        if key not in self._periodic:
            finder = _PeriodicGuards()
            body = loop.node.body  # type: ignore[attr-defined]
            walk.visit(body, finder)
            self._periodic[key] = frozenset(finder.guarded)
        return self._periodic[key]


def _on_accelerator(value: Value) -> bool:
    return value.device is not None and value.device.may_be_accelerator


def _holds_batch(element: Value) -> bool:
    """A loader's batch, or a tuple holding one (``enumerate(loader)``, ``zip(loader, ...)``)."""
    if element.kind == Kind.BATCH:
        return True
    return element.kind == Kind.CONTAINER and isinstance(element.info, tuple) and any(item.kind == Kind.BATCH for item in element.info)


def _is_step(event: CallEvent) -> bool:
    """``loss.backward()``, ``optimizer.step()``, ``scaler.step(optimizer)``."""
    if event.method == "backward":
        return True
    if event.method != "step":
        return False
    if event.receiver is not None and event.receiver.kind == Kind.OPTIMIZER:
        return True
    return any(value.kind == Kind.OPTIMIZER for _, value in event.args)


def _non_blocking(node: cst.Call) -> bool:
    given = keyword_arg(node, "non_blocking")
    return given is not None and isinstance(given.value, cst.Name) and given.value.value == "True"


class _PeriodicGuards(cst.CSTVisitor):
    """Nodes under the body of an ``if`` whose test has a ``%`` (``if step % 100 == 0:``)."""

    def __init__(self) -> None:
        self.guarded: set[int] = set()
        self._depth = 0

    def visit_If(self, node: cst.If) -> bool:
        if self._depth == 0 and (_has_modulo(node.test) or _compares_to_a_number(node.test)):
            self._depth += 1
            walk.visit(node.body, self)
            self._depth -= 1
            if node.orelse is not None:
                walk.visit(node.orelse, self)
            return False
        return True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._depth:
            self.guarded.add(id(node))
        return super().on_visit(node)


def _compares_to_a_number(test: cst.BaseExpression) -> bool:
    """``if i == 0:`` / ``if batch_idx == 10 and ...``: a body that runs in one step only."""
    tests = [test]
    while tests:
        current = tests.pop()
        if isinstance(current, cst.BooleanOperation) and isinstance(current.operator, cst.And):
            tests.extend((current.left, current.right))
        elif isinstance(current, cst.Comparison) and len(current.comparisons) == 1:
            target = current.comparisons[0]
            if isinstance(target.operator, cst.Equal) and (isinstance(target.comparator, cst.Integer) or isinstance(current.left, cst.Integer)):
                return True
    return False


def _has_modulo(test: cst.BaseExpression) -> bool:
    finder = _Modulo()
    walk.visit(test, finder)
    return finder.found


class _Modulo(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Modulo) and not isinstance(node.left, (cst.SimpleString, cst.FormattedString)):
            self.found = True
