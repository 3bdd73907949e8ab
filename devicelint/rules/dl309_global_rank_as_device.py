from __future__ import annotations

import io
import re
import tokenize

from typing import Optional

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
#: calls that start a process group
_PROCESS_GROUP_INITS = frozenset({"torch.distributed.init_process_group", "torch.distributed.distributed_c10d.init_process_group"})
#: the last name of a call that selects the current accelerator (``torch.npu.set_device``, ``accelerator.set_device_index``)
_SELECTOR_NAMES = frozenset({"set_device", "set_device_index"})
_NCCL = re.compile(r"""["']nccl["']""", re.IGNORECASE)
_RANKS = frozenset({Role.GLOBAL_RANK, Role.LOCAL_RANK})


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

    Also flags `init_process_group` with the NCCL backend in a program that places its work on
    the GPU a rank names (`torch.device(f"cuda:{local_rank}")`, `.to(local_rank)`,
    `device_ids=[local_rank]`) but never makes that GPU the process's current device: no
    `torch.cuda.set_device` (or `torch.accelerator.set_device_index`, `device_id=` to
    `init_process_group`) anywhere in the file. CUDA's current device is per process and
    starts at 0: NCCL's communicators for barriers and other device-less work, and every
    index-less `"cuda"` tensor, land on GPU 0 on every rank (extra memory there, hangs; PyTorch
    warns "using GPU 0 to perform barrier as devices used by this process are currently
    unknown"). Left alone where the call is in a setup function the file only defines (its
    callers, in other files, may select the GPU), and where no rank-derived GPU is used (a
    launcher may give each process one visible GPU).

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

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        #: ``init_process_group`` calls whose backend can be NCCL
        #: (call, name of the function it is in, None at module level)
        self._nccl_inits: list[tuple[cst.Call, Optional[str]]] = []
        #: a rank of this process used as a GPU index somewhere in the file
        self._rank_placed = False
        #: the file selects the process's GPU (``torch.cuda.set_device``, ``with torch.cuda.device``,
        #: ``init_process_group(device_id=...)``)
        self._selects_device = False

    def on_call(self, event: CallEvent) -> None:
        for arg, value in event.args:
            if _is_rank_device_string(arg.value, value):
                self._report_string(arg.value, value)
            if value.kind == Kind.STR and value.role in _RANKS and _is_device_string(arg.value, value):
                self._rank_placed = True
        for arg, value in self._device_arguments(event):
            if value.role is Role.GLOBAL_RANK and value.kind == Kind.NUMBER:
                self._report_ordinal(event.node, arg.value, value)
            if value.role in _RANKS:
                self._rank_placed = True
        self._note_process_group(event)

    def _note_process_group(self, event: CallEvent) -> None:
        if event.qualname in _SELECTORS or (event.qualname or event.method or "").rsplit(".", 1)[-1] in _SELECTOR_NAMES:
            self._selects_device = True
        if event.qualname not in _PROCESS_GROUP_INITS:
            return
        if any(arg.keyword is not None and arg.keyword.value == "device_id" for arg, _ in event.args):
            self._selects_device = True
            return
        backend = [arg for arg, _ in event.args if arg.keyword is None][:1] or [
            arg for arg, _ in event.args if arg.keyword is not None and arg.keyword.value == "backend"
        ]
        if backend and _NCCL.search(self.ctx.source_of(backend[0].value)):
            function = self.ctx.current_function.node
            self._nccl_inits.append((event.node, function.name.value if function is not None else None))

    def finish(self) -> None:
        """An NCCL process group in a process that places its work on the GPU its rank names but
        never makes that GPU its current device: NCCL's communicators, barriers and every
        index-less ``"cuda"`` tensor of each rank use GPU 0."""
        if not self._nccl_inits or not self._rank_placed or self._selects_device:
            return
        names = _code_names(self.ctx.source)
        if names is None or _selects(names):
            return  # selected where the analysis does not see a call (an alias, code it does not run)
        for call, function in dict.fromkeys(self._nccl_inits):
            if function is not None and not _called_outside_def(names, function):
                # a setup helper this file only defines: its callers, elsewhere, may select the GPU
                continue
            self.ctx.report(
                call,
                "this process joins an NCCL group and places its tensors on the GPU its rank names, but never "
                "makes that GPU its current device (`torch.cuda.set_device`): NCCL's communicator, barriers and "
                "index-less `\"cuda\"` tensors of every rank go to GPU 0 (memory on GPU 0, hangs); call "
                "`torch.cuda.set_device(local_rank)` before the group is used, or pass `device_id=`",
            )

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


def _code_names(source: str) -> Optional[list[tuple[int, str]]]:
    """The file's names and operators (not its comments or strings); None where it does not tokenize."""
    try:
        return [
            (token.type, token.string)
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type in (tokenize.NAME, tokenize.OP)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _called_outside_def(tokens: list[tuple[int, str]], function: str) -> bool:
    """``function(`` or ``.function(`` appears other than after ``def``."""
    for index, (kind, text) in enumerate(tokens):
        if kind == tokenize.NAME and text == function and tokens[index + 1 : index + 2] == [(tokenize.OP, "(")]:
            if index == 0 or tokens[index - 1] != (tokenize.NAME, "def"):
                return True
    return False


def _selects(tokens: list[tuple[int, str]]) -> bool:
    """The code names a device selector: ``set_device``, ``set_device_index``, ``cuda.device(``,
    a ``device_id`` keyword."""
    for index, (kind, text) in enumerate(tokens):
        if kind != tokenize.NAME:
            continue
        if text in _SELECTOR_NAMES or text == "device_id":
            return True
        if text == "device" and index >= 2 and tokens[index - 2][1] == "cuda" and tokens[index + 1 : index + 2] == [(tokenize.OP, "(")]:
            return True
    return False


def _is_device_string(node: cst.BaseExpression, value: Value) -> bool:
    """``f"cuda:{rank}"`` and its other spellings, of either rank."""
    if isinstance(node, (cst.FormattedString, cst.BinaryOperation)):
        return True
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format"


def _is_rank_device_string(node: cst.BaseExpression, value: Value) -> bool:
    """``f"cuda:{rank}"`` written right here (not a name that holds one: it was reported
    where it was written)."""
    if value.kind != Kind.STR or value.role is not Role.GLOBAL_RANK:
        return False
    if isinstance(node, (cst.FormattedString, cst.BinaryOperation)):
        return True  # f"cuda:{rank}", "cuda:" + str(rank), "cuda:%d" % rank
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format"

