from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis.flow import CallEvent
from devicelint.analysis.names import dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import Kind, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})


@dataclass
class _Wrapper:
    call: cst.Call
    inner: Value
    first_device: int
    inner_name: Optional[str]
    names: set[str] = field(default_factory=set)
    moved: bool = False
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
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._wrappers: dict[int, _Wrapper] = {}

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in _DATA_PARALLEL:
            self._wrapper_built(event)
            return
        if event.method in ("to", "cuda") and isinstance(event.node.func, cst.Attribute):
            receiver = event.node.func.value
            spelled = dotted_name(receiver)
            for wrapper in self._wrappers.values():
                # moving the wrapper, or the model it wraps, puts the parameters in place
                if receiver is wrapper.call or (spelled is not None and (spelled in wrapper.names or spelled == wrapper.inner_name)):
                    wrapper.moved = True
            return
        for arg, _ in event.args:
            spelled = dotted_name(arg.value)
            for wrapper in self._wrappers.values():
                if arg.value is wrapper.call or (spelled is not None and spelled in wrapper.names):
                    wrapper.escaped = True

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
        if inner is None or inner.kind != Kind.MODULE or inner.device is None:
            return
        first = _first_device_id(event.node, positional)
        if first is None:
            return
        self._wrappers[id(event.node)] = _Wrapper(event.node, inner, first, dotted_name(module_node))

    def finish(self) -> None:
        returned = _ReturnedNames()
        if self._wrappers:
            self.ctx.module.visit(returned)
        for wrapper in self._wrappers.values():
            if not wrapper.names or wrapper.escaped or wrapper.names & returned.names:
                continue  # not kept here, or handed to code that may move it
            device = wrapper.inner.device
            assert device is not None
            if device.is_cpu and not wrapper.moved:
                self.ctx.report(
                    wrapper.call,
                    f"the wrapped model is on the CPU and is never moved, but DataParallel needs its "
                    f"parameters on cuda:{wrapper.first_device} (device_ids[0]) before the first forward; "
                    f"move it there first",
                )
            elif device.is_accel and device.index is not None and device.index != wrapper.first_device:
                self.ctx.report(
                    wrapper.call,
                    f"the wrapped model was moved to cuda:{device.index}, but DataParallel needs it on "
                    f"cuda:{wrapper.first_device} (device_ids[0])",
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
