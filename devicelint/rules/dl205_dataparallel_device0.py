from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import libcst as cst

from devicelint.analysis import torch_api as api
from devicelint.analysis import walk
from devicelint.analysis.events import CallEvent
from devicelint.analysis.facts import ClassInfo
from devicelint.analysis.names import dotted_name, keyword_arg, positional_args
from devicelint.analysis.values import RANK_ROLES, Kind, Role, Value
from devicelint.findings import Severity
from devicelint.rules._cuda_code import NCCL_NAMED
from devicelint.rules.base import Example, Rule

_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.data_parallel.DataParallel"})
#: a backend for CPU tensors named (the program may choose it for a CPU run)
_OTHER_BACKEND = re.compile(r"""['"](gloo|ccl)['"]|Backend\.GLOO\b""")


def _builds_distributed_wrapper_of_file(event: CallEvent) -> bool:
    """A class of the file derived from ``DistributedDataParallel`` (mmcv's
    ``MMDistributedDataParallel``, which only changes how inputs are scattered), built with a
    module: its constructor is DDP's."""
    info = event.callee.info
    return event.callee.kind == Kind.CLASS and isinstance(info, ClassInfo) and info.is_module and info.is_distributed_wrapper and bool(event.args)


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
    #: the model was put on the GPU of the process's rank before it was wrapped: the move and
    #: the rank's role (see devicelint.analysis.ranks)
    on_rank_gpu: Optional[tuple[cst.Call, Role]] = None


class DataParallelDevice0(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(model, ...)` where the wrapped model is known to sit on the CPU (built
    here and never moved) and neither the wrapper nor the model is moved afterwards, or where the
    model was moved to a GPU other than the first of `device_ids` (`cuda:0` when `device_ids` is
    not given). A wrapper that is returned or handed to other code (a trainer) is left alone.
    Also flags a DataParallel whose `device_ids[0]` is known (a literal, or 0 when not given)
    around a model put on the GPU of the process's rank in a distributed job
    (`model.to(torch.device(f"cuda:{local_rank}"))`, `model.cuda()` after
    `torch.cuda.set_device(local_rank)`; the rank read from `LOCAL_RANK`, `RANK`, the
    `--local-rank` option `torch.distributed.launch` passes, `dist.get_rank()`): every process
    but one has it on another GPU. And it flags `DistributedDataParallel(model,
    device_ids=[...])` around a model known to be on the CPU (built here and not moved before
    the wrapper): DDP's constructor raises at once ("device_ids and output_device arguments
    only work with single-device/multiple-device GPU modules or CPU modules"), so a move of the
    wrapper afterwards comes too late. Without `device_ids` the same holds in a program whose
    process group is NCCL (and no CPU backend is named): the constructor broadcasts the
    parameters and buffers from rank 0, and NCCL takes CUDA tensors only ("Tensors must be CUDA
    and dense"). A class of the file derived from `DistributedDataParallel` (mmcv's
    `MMDistributedDataParallel`) is built by the same constructor.

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
        # on the local rank's GPU, and DataParallel told to use that GPU
        "import os\nimport torch\nfrom torch import nn\ndef main():\n    local_rank = int(os.environ['LOCAL_RANK'])\n"
        "    net = nn.Linear(4, 4).to(torch.device(f'cuda:{local_rank}'))\n"
        "    model = nn.DataParallel(net, device_ids=[local_rank])  # noqa: DL405\n    return model\n",
        # DistributedDataParallel: a model moved to the process's GPU first, one moved only on
        # some path (`if args.gpu is not None: model.cuda(args.gpu)`), a CPU model without
        # `device_ids`, a model handed in
        "import torch\nfrom torch import nn\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
        "def wrap(gpu, args, given):\n    net = nn.Linear(4, 4)\n    net.cuda(gpu)\n    a = DDP(net, device_ids=[gpu])\n"
        "    other = nn.Linear(4, 4)\n    if args.gpu is not None:\n        other.cuda(args.gpu)\n"
        "    b = DDP(other, device_ids=[args.gpu])\n    c = DDP(nn.Linear(4, 4), device_ids=None)\n"
        "    d = DDP(nn.Linear(4, 4))\n    e = DDP(given, device_ids=[gpu])\n    return a, b, c, d, e\n",
        # moved to the rank's GPU, then back to one fixed GPU before wrapping
        "import os\nimport torch\nfrom torch import nn\nlocal_rank = int(os.environ['LOCAL_RANK'])\n"
        "net = nn.Linear(4, 4)\nnet.cuda(local_rank)\nnet.to('cuda:0')\nmodel = nn.DataParallel(net)  # noqa: DL405\n",
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
        # a distributed script: each process moves the model to its local rank's GPU (the
        # launcher's --local_rank option), then DataParallel wants it on cuda:0 (FFB6D)
        Example(
            "import argparse\nimport torch\nimport torch.distributed as dist\nfrom torch import nn\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--local_rank', type=int, default=0)\n"
            "def train():\n    args = parser.parse_args()\n    dist.init_process_group('nccl')\n"
            "    torch.cuda.set_device(args.local_rank)\n    model = nn.Linear(4, 4).cuda()\n"
            "    model = nn.DataParallel(model)  # noqa: DL405  # expect: DL205\n"
            "    model = nn.parallel.DistributedDataParallel(model, device_ids=[args.local_rank])\n    return model\n"
        ),
        Example(
            "import os\nimport torch\nfrom torch import nn\ndef main():\n"
            "    device = torch.device('cuda', int(os.environ['LOCAL_RANK']))\n    net = nn.Linear(4, 4)\n    net.to(device)\n"
            "    model = nn.DataParallel(net)  # noqa: DL405  # expect: DL205\n    return model\n"
        ),
        # DistributedDataParallel given `device_ids` around a model still on the CPU raises in
        # its constructor; moving the wrapper afterwards is too late
        Example(
            "import torch\nfrom torch import nn\ndef worker(gpu):\n    torch.cuda.set_device(gpu)\n    net = nn.Linear(4, 4)\n"
            "    model = nn.parallel.DistributedDataParallel(net, device_ids=[gpu])  # expect: DL205\n"
            "    return model.cuda()\n"
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
        #: moves onto the GPU of the process's rank (`model.to(torch.device(f"cuda:{local_rank}"))`,
        #: `model.cuda()` after `torch.cuda.set_device(local_rank)`), by the move's id: (the
        #: move, the rank's role)
        self._rank_moves: dict[int, tuple[cst.Call, Role]] = {}
        #: per function (id) and name: the rank move that last placed the module it holds
        self._on_rank_gpu: dict[tuple[int, str], tuple[cst.Call, Role]] = {}
        #: per function (id): the rank whose GPU `torch.cuda.set_device` made current there
        self._current_rank: dict[int, Role] = {}

    def on_call(self, event: CallEvent) -> None:
        if event.qualname in api.DISTRIBUTED_DATA_PARALLEL or _builds_distributed_wrapper_of_file(event):
            self._distributed_wrapper(event)
        if event.qualname in _DATA_PARALLEL:
            self._wrapper_built(event)
            return
        if event.qualname == "torch.cuda.set_device":
            rank = next((value.role for _, value in event.args[:1] if value.role in RANK_ROLES), None)
            if rank is not None:
                self._current_rank[self._scope()] = rank
            else:
                self._current_rank.pop(self._scope(), None)
        here = [wrapper for wrapper in self._wrappers.values() if wrapper.scope == self._scope()]
        if event.method in ("to", "cuda") and isinstance(event.node.func, cst.Attribute):
            receiver = event.node.func.value
            spelled = dotted_name(receiver)
            self._rank_move(event, spelled)
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

    def _distributed_wrapper(self, event: CallEvent) -> None:
        """`DistributedDataParallel(model, device_ids=[...])` around a model known to be on the
        CPU: DDP's constructor raises "device_ids and output_device arguments only work with
        single-device/multiple-device GPU modules or CPU modules" at once, so a later move comes
        too late (pytorch/pytorch#46821: the `model.cuda(args.gpu)` before it commented out)."""
        positional = positional_args(event.node)
        module_arg = keyword_arg(event.node, "module")
        module_node = module_arg.value if module_arg is not None else (positional[0].value if positional else None)
        ids_arg = keyword_arg(event.node, "device_ids")
        ids_node = ids_arg.value if ids_arg is not None else (positional[1].value if len(positional) > 1 else None)
        inner = next((value for arg, value in event.args if arg.value is module_node), None) if module_node is not None else None
        if inner is None or inner.kind != Kind.MODULE or inner.device is None or not inner.device.is_cpu:
            return
        if ids_node is None and ids_arg is None and self._nccl_only():
            # no device_ids: DDP's constructor broadcasts the module's parameters and buffers
            # from rank 0 over the process group, and NCCL takes CUDA tensors only
            self.ctx.report(
                event.node,
                "the wrapped model is still on the CPU, and the program's process group is NCCL: DistributedDataParallel "
                "broadcasts the model's parameters and buffers from rank 0 when it is built, and NCCL takes CUDA tensors "
                "only (\"Tensors must be CUDA and dense\"), so a move of the wrapper afterwards comes too late; move the "
                "model to its GPU before wrapping it",
            )
            return
        if module_node is None or not isinstance(ids_node, (cst.List, cst.Tuple)) or not ids_node.elements:
            return  # no device_ids, `None`, or a value that may be None / empty on the CPU path
        self.ctx.report(
            event.node,
            "the wrapped model is still on the CPU, but `device_ids` is given: DistributedDataParallel raises at once "
            "(\"device_ids and output_device arguments only work with single-device/multiple-device GPU modules or CPU "
            "modules\"); move the model to its GPU before wrapping it, or leave `device_ids` out for a CPU model",
        )

    def _nccl_only(self) -> bool:
        """Does the program name NCCL as its process group's backend, and no other backend?"""
        source = self.ctx.source
        return NCCL_NAMED.search(source) is not None and _OTHER_BACKEND.search(source) is None

    def _rank_move(self, event: CallEvent, receiver: Optional[str]) -> None:
        """Remember a move of a module onto the GPU of the process's rank, and forget the rank
        GPU of a name moved anywhere else."""
        positional = [value for arg, value in event.args if arg.keyword is None]
        target = keyword_arg(event.node, "device")
        chosen = positional[0] if positional else next((value for arg, value in event.args if arg is target), None)
        rank: Optional[Role] = None
        if chosen is not None and chosen.role in RANK_ROLES:
            rank = chosen.role
        elif chosen is None and event.method == "cuda":
            rank = self._current_rank.get(self._scope())  # the current GPU: the rank's
        if rank is not None and event.result.kind == Kind.MODULE:
            self._rank_moves[id(event.node)] = (event.node, rank)
        if receiver is not None:
            if rank is not None and event.result.kind == Kind.MODULE:
                self._on_rank_gpu[(self._scope(), receiver)] = (event.node, rank)
            elif event.method == "cuda" or chosen is not None and chosen.kind != Kind.REF:
                self._on_rank_gpu.pop((self._scope(), receiver), None)

    def _scope(self) -> int:
        return id(self.ctx.current_function.node)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        wrapper = self._wrappers.get(id(value_node))
        name = dotted_name(target)
        if wrapper is not None and name is not None:
            wrapper.names.add(name)
        if name is not None:
            moved = self._rank_moves.get(id(value_node))
            if moved is not None:
                self._on_rank_gpu[(self._scope(), name)] = moved  # `model = Net().to(device)`
            else:
                self._on_rank_gpu.pop((self._scope(), name), None)

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
        wrapper = _Wrapper(event.node, inner, first, dotted_name(module_node), self._scope())
        inner_name = wrapper.inner_name
        wrapper.on_rank_gpu = self._rank_moves.get(id(module_node)) or (
            self._on_rank_gpu.get((self._scope(), inner_name)) if inner_name is not None else None
        )
        self._wrappers[id(event.node)] = wrapper

    def finish(self) -> None:
        returned = _ReturnedNames()
        if self._wrappers:
            walk.visit(self.ctx.module, returned)
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
            if wrapper.on_rank_gpu is not None and wrapper.first_device is not None and not wrapper.moved:
                self._report_rank_gpu(wrapper, first)
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


    def _report_rank_gpu(self, wrapper: _Wrapper, first: str) -> None:
        """The model sits on the GPU of the process's rank, one per process of a distributed
        job, while DataParallel needs it on one fixed GPU (FFB6D)."""
        assert wrapper.on_rank_gpu is not None
        move, rank = wrapper.on_rank_gpu
        which = "local rank" if rank is Role.LOCAL_RANK else "rank"
        given = "its `device_ids`" if keyword_arg(wrapper.call, "device_ids") is not None or len(positional_args(wrapper.call)) > 1 else (
            "`device_ids` not given: every visible GPU"
        )
        self.ctx.report(
            wrapper.call,
            f"the model is on the GPU of the process's {which} (moved at line {self.ctx.line(move)}), but DataParallel "
            f"({given}) needs its parameters on {first}: every process whose {which} is not {wrapper.first_device} fails at "
            f"the first forward (\"module must have its parameters and buffers on device cuda:{wrapper.first_device} "
            f"(device_ids[0])\"); in a distributed job wrap the model in DistributedDataParallel only, or pass "
            f"`device_ids=[{which.replace(' ', '_')}]`",
            related=((move, "moved here"),),
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
