from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.names import dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})


@dataclass
class _Wrapper:
    call: cst.Call
    inner: Value
    #: device_ids[0] when known (0 when device_ids is not given)
    first_device: Optional[int]
    inner_name: Optional[str]
    #: the function (id) it was built in: names are matched there only
    scope: int = 0
    names: set[str] = field(default_factory=set)
    moved: bool = False
    #: the move that put the parameters on a known accelerator index, and that index
    moved_to: Optional[tuple[cst.Call, int]] = None
    #: the wrapper ran a forward while its model was still where it was built
    forward_before_move: bool = False
    #: handed to other code (returned, passed to a function), which may move it
    escaped: bool = False


class DataParallelDevice0(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(model, ...)` where the wrapped model is known to sit on the CPU (built
    here and never moved) and neither the wrapper nor the model is moved afterwards, or where the
    model was moved to a GPU other than the first of `device_ids` (`cuda:0` when `device_ids` is
    not given). A wrapper that is returned or handed to other code (a trainer) is left alone.

    ## Why is this bad?
    DataParallel scatters inputs from and gathers outputs to `device_ids[0]`, and it requires the
    module's parameters and buffers to be there before the first forward: "module must have its
    parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device:
    cpu". On a CPU-only machine DataParallel quietly runs the module as it is, so the mistake
    shows only on the GPU machine.

    ## Example
    ```python
    model = nn.DataParallel(Net(), device_ids=[0, 1])
    out = model(batch)
    ```

    ## Use instead
    ```python
    model = nn.DataParallel(Net().to("cuda:0"), device_ids=[0, 1])
    out = model(batch)
    ```
    """

    code = "DL205"
    name = "dataparallel-device0"
    severity = Severity.ERROR
    summary = "`nn.DataParallel` of a model that is not on `device_ids[0]` before its first forward."
    valid = (
        "import torch\nfrom torch import nn\nmodel = nn.DataParallel(nn.Linear(4, 4).cuda(), device_ids=[0, 1])  # noqa: DL405\n",
        "import torch\nfrom torch import nn\nmodel = nn.DataParallel(nn.Linear(4, 4)).cuda()  # noqa: DL405\n",
        "import torch\nfrom torch import nn\nmodel = nn.DataParallel(nn.Linear(4, 4))  # noqa: DL405\nmodel.to('cuda')\n",
        "import torch\nfrom torch import nn\ndef wrap():\n    return nn.DataParallel(nn.Linear(4, 4))  # noqa: DL405\n",
        "import torch\nfrom torch import nn\ndef build():\n    model = nn.DataParallel(nn.Linear(4, 4))  # noqa: DL405\n    return model\n",
        "import torch\nfrom torch import nn\nnet = nn.Linear(4, 4)\nmodel = nn.DataParallel(net)  # noqa: DL405\nnet.cuda()\n",
        "import torch\nfrom torch import nn\nmodel = nn.DataParallel(nn.Linear(4, 4))  # noqa: DL405\ntrainer.fit(model)\n",
        "import torch\nfrom torch import nn\nnet = nn.Linear(4, 4).to('cuda:1')\nmodel = nn.DataParallel(net, device_ids=[1, 2])  # noqa: DL405\n",
    )
    invalid = (
        Example(
            "import torch\nfrom torch import nn\nnet = nn.Linear(4, 4)\n"
            "model = nn.DataParallel(net, device_ids=[0, 1])  # noqa: DL405  # expect: DL205\nout = model(x)\n"
        ),
        Example(
            "import torch\nfrom torch import nn\nnet = nn.Linear(4, 4).to('cuda:1')\n"
            "model = nn.DataParallel(net)  # noqa: DL405  # expect: DL205\n"
        ),
        # moved after wrapping, to a GPU that is not device_ids[0] (google-research/big_transfer)
        Example(
            "import torch\nmodel = torch.nn.DataParallel(build())  # noqa: DL405  # expect: DL205\n"
            "model = model.to(torch.device('cuda:1'))\n"
        ),
        # a forward before the model is placed; handing it on afterwards does not help
        Example(
            "import torch\nfrom torch import nn\ndef train(net, loader, devices):\n"
            "    net = nn.DataParallel(net, device_ids=devices)  # noqa: DL405  # expect: DL205\n"
            "    for x in loader:\n        out = net(x)\n    evaluate(net)\n"
            "train(nn.Linear(4, 4), loader, [0, 1])\n"
        ),
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._wrappers: dict[int, _Wrapper] = {}

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in _DATA_PARALLEL:
            self._wrapper_built(event)
            return
        here = [wrapper for wrapper in self._wrappers.values() if wrapper.scope == self._scope()]
        if event.method in ("to", "cuda") and isinstance(event.node.func, cst.Attribute):
            receiver = event.node.func.value
            spelled = dotted_name(receiver)
            for wrapper in here:
                # moving the wrapper, or the model it wraps, puts the parameters in place
                if receiver is wrapper.call or (spelled is not None and (spelled in wrapper.names or spelled == wrapper.inner_name)):
                    wrapper.moved = True
                    target = event.result.device
                    if target is not None and target.is_accel and target.index is not None:
                        wrapper.moved_to = (event.node, target.index)
            return
        called = dotted_name(event.node.func)
        for wrapper in here:
            if called is not None and called in wrapper.names and not wrapper.moved and not wrapper.escaped:
                wrapper.forward_before_move = True
        for arg, _ in event.args:
            spelled = dotted_name(arg.value)
            for wrapper in here:
                if arg.value is wrapper.call or (spelled is not None and spelled in wrapper.names):
                    wrapper.escaped = True

    def _scope(self) -> int:
        return id(self.ctx.current_function.node)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        wrapper = self._wrappers.get(id(value_node))
        name = dotted_name(target)
        if wrapper is not None and name is not None:
            wrapper.names.add(name)

    def _wrapper_built(self, event: CallEvent) -> None:
        positional = positional_args(event.node)
        module_arg = keyword_arg(event.node, "module")
        module_node = module_arg.value if module_arg is not None else (positional[0].value if positional else None)
        if module_node is None:
            return
        inner = next((value for arg, value in event.args if arg.value is module_node), None)
        if inner is None:
            return
        first = _first_device_id(event.node, positional)
        self._wrappers[id(event.node)] = _Wrapper(event.node, inner, first, dotted_name(module_node), self._scope())

    def finish(self) -> None:
        returned = _ReturnedNames()
        if self._wrappers:
            self.ctx.module.visit(returned)
        for wrapper in self._wrappers.values():
            first = "device_ids[0]" if wrapper.first_device is None else f"cuda:{wrapper.first_device} (device_ids[0])"
            if wrapper.moved_to is not None and wrapper.first_device is not None and wrapper.moved_to[1] != wrapper.first_device:
                self.ctx.report(
                    wrapper.call,
                    f"the model is moved to cuda:{wrapper.moved_to[1]} (line {self.ctx.line(wrapper.moved_to[0])}), "
                    f"but DataParallel needs its parameters on {first}; pass `device_ids` starting with "
                    f"{wrapper.moved_to[1]}, or move it to cuda:{wrapper.first_device}",
                    related=((wrapper.moved_to[0], "moved here"),),
                )
                continue
            device = wrapper.inner.device if wrapper.inner.kind == Kind.MODULE else None
            if device is None:
                continue
            unplaced = wrapper.forward_before_move or (
                wrapper.names and not wrapper.escaped and not wrapper.moved and not wrapper.names & returned.names
            )
            if device.is_cpu and unplaced:
                self.ctx.report(
                    wrapper.call,
                    f"the wrapped model is on the CPU and is not moved before the first forward, but "
                    f"DataParallel needs its parameters on {first}; move it there first",
                )
            elif device.is_accel and device.index is not None and wrapper.first_device is not None and device.index != wrapper.first_device:
                self.ctx.report(
                    wrapper.call,
                    f"the wrapped model was moved to cuda:{device.index}, but DataParallel needs it on "
                    f"{first}",
                )


class _ReturnedNames(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            name = dotted_name(node.value)
            if name is not None:
                self.names.add(name)


def _first_device_id(call: cst.Call, positional: list[cst.Arg]) -> Optional[int]:
    """device_ids[0] when it is a literal, 0 when device_ids is not given, else None."""
    device_ids = keyword_arg(call, "device_ids")
    node = device_ids.value if device_ids is not None else (positional[1].value if len(positional) > 1 else None)
    if node is None:
        return 0
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        first = node.elements[0].value
        if isinstance(first, cst.Integer):
            return int(first.evaluated_value)
    return None
