from __future__ import annotations

import libcst as cst

from devicelint.analysis.events import CallEvent
from devicelint.analysis.values import Kind, Role, Value
from devicelint.findings import Severity
from devicelint.rules.base import Example, Rule

#: calls that select a GPU by index: the argument is a device ordinal of this node
_SELECTORS = frozenset(
    {
        "torch.cuda.set_device",
        "torch.cuda.device",
        "torch.xpu.set_device",
        "torch.xpu.device",
        "torch.accelerator.set_device_index",
        "torch.accelerator.device_index",
    }
)
#: keyword arguments that take a device (or a device ordinal) in torch and its wrappers
_DEVICE_KEYWORDS = frozenset({"device", "output_device", "device_id", "map_location"})
_MOVES = frozenset({"to", "cuda", "xpu"})


class GlobalRankAsDevice(Rule):
    """
    ## What it does
    Flags the global rank of a distributed process used as a GPU index:
    `torch.cuda.set_device(rank)`, `torch.device("cuda", rank)`, `f"cuda:{rank}"` /
    `"cuda:{}".format(rank)`, `"cuda:" + str(rank)`, `"cuda:%d" % rank`, `.to(rank)`, `.cuda(rank)`, `device=rank`,
    `device_ids=[rank]`, `output_device=rank`, `device_id=rank`, `map_location=rank`.

    A value is the global rank when the analysis traces it to where launchers and
    `torch.distributed` put it: `dist.get_rank()` (without a process group), the `RANK`,
    `SLURM_PROCID`, `OMPI_COMM_WORLD_RANK` or `PMI_RANK` environment variables
    (`int(os.environ["RANK"])`, `os.environ.get("RANK")`, `os.getenv("RANK")`), horovod's
    `hvd.rank()` - through assignments, `int(...)`/`str(...)`, attributes set in the same
    function (`args.rank = int(os.environ["RANK"])`) and helpers that return it. A variable's
    name is never the evidence: a parameter called `rank` is not flagged.

    Left alone, because they are node-local GPU indices or not known to be the global rank:
    `LOCAL_RANK` and `get_local_rank()`, the process index `mp.spawn` passes to its function
    (it counts the processes of one machine), `rank % torch.cuda.device_count()` (a correct,
    common idiom: arithmetic makes the value a new number), ranks computed from node and GPU
    indices, and values that are the rank on one path only. There is no fix: which local index
    the launcher provides (`LOCAL_RANK`, `SLURM_LOCALID`, `rank % gpus_per_node`) is the
    program's to choose.

    Verified on torch 2.13 (CPU build): `torch.device(3)` - a bare int - names an accelerator
    ordinal (on a machine without one it raises "Cannot access accelerator device when none is
    available"). torch 2.13's `torch/distributed/run.py` documents `RANK` as "the global rank"
    and `LOCAL_RANK` as "the local rank", and configures DDP with
    `device_ids=[local_rank], output_device=local_rank`; `dist.get_node_local_rank()` says the
    node-local rank is what maps processes to devices.

    ## Why is this bad?
    Ranks number the processes of the whole job; GPU indices count the devices of one
    machine. On a single node the two agree, so the program works until it runs on two: the
    process with rank 8 on a node with 8 GPUs asks for `cuda:8` and fails with
    `RuntimeError: CUDA error: invalid device ordinal` (as reported for llama-recipes,
    sentence-transformers and gpt-oss).

    ## Example
    ```python
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    model = DDP(model.to(rank), device_ids=[rank])
    ```

    ## Use instead
    ```python
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.to(local_rank), device_ids=[local_rank])
    ```
    """

    code = "DL309"
    name = "global-rank-as-device"
    severity = Severity.WARNING
    summary = "The job-wide rank used as a GPU index: wrong or missing device on every node but the first."
    valid = (
        "import os\nimport torch\nlocal_rank = int(os.environ['LOCAL_RANK'])\ntorch.cuda.set_device(local_rank)\n",
        "import torch\nimport torch.distributed as dist\nrank = dist.get_rank()\n"
        "device = rank % torch.cuda.device_count()\ntorch.cuda.set_device(device)\n",
        # mp.spawn's process index counts the processes of one machine
        "import torch\nimport torch.multiprocessing as mp\ndef worker(rank, world_size):\n"
        "    torch.cuda.set_device(rank)\nmp.spawn(worker, args=(2,), nprocs=2)\n",
        # the rank for logging and for init_process_group is fine
        "import os\nimport torch.distributed as dist\nrank = int(os.environ['RANK'])\n"
        "dist.init_process_group('nccl', rank=rank)\nprint(f'rank {rank}')\n",
    )
    invalid = (
        Example(
            "import torch\nimport torch.distributed as dist\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n"
            "rank = dist.get_rank()\ntorch.cuda.set_device(rank)  # expect: DL309\n"
            "model = DDP(torch.nn.Linear(2, 2).cuda(), device_ids=[rank])  # expect: DL309\n"
        ),
        Example(
            "import os\nimport torch\nclass Args:\n    pass\nargs = Args()\n"
            "args.rank = int(os.environ['RANK'])\ndevice = torch.device('cuda', args.rank)  # expect: DL309\n"
        ),
        Example(
            "import torch\nimport torch.distributed as dist\ndef setup():\n    rank = dist.get_rank()\n"
            "    device = f'cuda:{rank}'  # expect: DL309\n    return torch.zeros(3, device=device)\n"
        ),
    )

    def on_call(self, event: CallEvent) -> None:
        for arg, value in event.args:
            if _is_rank_device_string(arg.value, value):
                self._report_string(arg.value, value)
        for arg, value in self._device_arguments(event):
            if value.role is Role.GLOBAL_RANK and value.kind == Kind.NUMBER:
                self._report_ordinal(event.node, arg.value, value)

    def on_assign(self, statement: cst.CSTNode, target: cst.BaseExpression, value_node: cst.BaseExpression, value: Value) -> None:
        if _is_rank_device_string(value_node, value):
            self._report_string(value_node, value)

    def on_return(self, node: cst.Return, value: Value) -> None:
        if node.value is not None and _is_rank_device_string(node.value, value):
            self._report_string(node.value, value)

    def _device_arguments(self, event: CallEvent) -> list[tuple[cst.Arg, Value]]:
        """The arguments of this call that name a device or a device ordinal."""
        found: list[tuple[cst.Arg, Value]] = []
        positional = [(arg, value) for arg, value in event.args if arg.keyword is None and not arg.star]
        if event.qualname in _SELECTORS and positional:
            found.append(positional[0])
        elif event.qualname == "torch.device" and positional:
            # torch.device(rank) or torch.device("cuda", rank)
            found.append(positional[1] if len(positional) > 1 else positional[0])
        elif event.method in _MOVES and event.qualname is None and positional:
            found.append(positional[0])
        for arg, value in event.args:
            if arg.keyword is None:
                continue
            keyword = arg.keyword.value
            if keyword in _DEVICE_KEYWORDS or event.qualname == "torch.device" and keyword == "index":
                found.append((arg, value))
            elif keyword == "device_ids" and value.kind == Kind.CONTAINER and isinstance(value.info, tuple) and isinstance(arg.value, (cst.List, cst.Tuple)):
                found.extend((cst.Arg(element.value), item) for element, item in zip(arg.value.elements, value.info))
        return found

    def _report_ordinal(self, call: cst.Call, node: cst.BaseExpression, value: Value) -> None:
        rank = self.ctx.source_of(node)
        self.ctx.report(
            call,
            f"`{rank}` is the global rank{self._origin(value)}, used here as a GPU index: on every node but "
            f"the first it names a GPU that does not exist; use the local rank (`LOCAL_RANK`) or "
            f"`{rank} % torch.cuda.device_count()`",
        )

    def _report_string(self, node: cst.BaseExpression, value: Value) -> None:
        self.ctx.report(
            node,
            f"`{self.ctx.source_of(node)}` makes a device of the global rank{self._origin(value)}: on every node "
            f"but the first it names a GPU that does not exist; use the local rank (`LOCAL_RANK`)",
        )

    def _origin(self, value: Value) -> str:
        origin = value.origin
        if origin is None:
            return ""
        return f" ({origin.how} at line {self.ctx.line(origin.node)})"


def _is_rank_device_string(node: cst.BaseExpression, value: Value) -> bool:
    """``f"cuda:{rank}"`` written right here (not a name that holds one: it was reported
    where it was written)."""
    if value.kind != Kind.STR or value.role is not Role.GLOBAL_RANK:
        return False
    if isinstance(node, (cst.FormattedString, cst.BinaryOperation)):
        return True  # f"cuda:{rank}", "cuda:" + str(rank), "cuda:%d" % rank
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format"

