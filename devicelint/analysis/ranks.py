"""Where a process rank comes from: the values that are the job-wide (global) rank, or the
rank of the process on its node (local).

A distributed job numbers its processes across every node (``dist.get_rank()``, the ``RANK``
variable torchrun sets, ``SLURM_PROCID`` ...); a GPU index counts the devices of one node
(``LOCAL_RANK``). The two agree only on the first node. The analysis marks values that are the
global rank with ``Role.GLOBAL_RANK`` - by where they come from, never by how a variable is
named - and the node-local rank with ``Role.LOCAL_RANK`` (``LOCAL_RANK``, the ``--local-rank``
option ``torch.distributed.launch`` passes, an option whose default is such a rank), and keeps the mark through ``int(...)`` / ``str(...)`` and assignments. Arithmetic drops
it (``rank % torch.cuda.device_count()`` is a device index again). A device string that is
exactly an accelerator name and the rank (``f"cuda:{rank}"``, ``"cuda:{}".format(rank)``,
``"cuda:" + str(rank)``, ``"cuda:%d" % rank``) is a ``Kind.STR`` carrying the mark and the
rank's origin.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.values import RANK_ROLES, Kind, Origin, Role, UNKNOWN, Value

#: environment variables launchers set to the global rank of the process
GLOBAL_RANK_VARIABLES = frozenset({"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
#: environment variables launchers set to the rank of the process on its node
LOCAL_RANK_VARIABLES = frozenset({"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"})
#: calls that return the rank of the process on its node
LOCAL_RANK_CALLS = frozenset({"torch.distributed.get_node_local_rank", "horovod.torch.local_rank", "deepspeed.comm.get_local_rank"})
#: the command-line option through which `python -m torch.distributed.launch` hands each
#: process its local rank (without `--use-env`)
LAUNCHER_LOCAL_RANK_OPTIONS = frozenset({"--local_rank", "--local-rank"})
#: calls that return the global rank when given no process group
GLOBAL_RANK_CALLS = frozenset(
    {
        "torch.distributed.get_rank",
        "torch.distributed.distributed_c10d.get_rank",
        "horovod.torch.rank",
        "deepspeed.comm.get_rank",
    }
)
_ENVIRON_READS = frozenset({"os.environ.get", "os.getenv", "os.environ.__getitem__"})
#: the text before ``{rank}`` in a device string: an accelerator's name and a colon
_DEVICE_PREFIX = re.compile(r"^(cuda|xpu|npu|hpu|mps):$")
#: ``"cuda:%d" % rank``: the same device string, printf-style
_PERCENT_TEMPLATE = re.compile(r"^(cuda|xpu|npu|hpu|mps):%[dis]$")


def _global_rank(origin_node: cst.CSTNode, how: str) -> Value:
    return Value(Kind.NUMBER, origin=Origin(origin_node, how), role=Role.GLOBAL_RANK)


def _rank_variable(name: object) -> Optional[Role]:
    if name in GLOBAL_RANK_VARIABLES:
        return Role.GLOBAL_RANK
    if name in LOCAL_RANK_VARIABLES:
        return Role.LOCAL_RANK
    return None


def environ_item(qualname: Optional[str], key: Value, node: cst.CSTNode) -> Value:
    """``os.environ["RANK"]`` / ``os.environ["LOCAL_RANK"]``: the global or local rank (as
    text); anything else read from the environment is unknown."""
    role = _rank_variable(key.literal) if qualname == "os.environ" and key.kind == Kind.STR else None
    if role is not None:
        return Value(Kind.STR, origin=Origin(node, f"read from the `{key.literal}` environment variable"), role=role)
    return UNKNOWN


def rank_of_call(
    node: cst.Call,
    qualname: Optional[str],
    callee: Value,
    method: Optional[str],
    receiver: Optional[Value],
    args: tuple[tuple[cst.Arg, Value], ...],
) -> Optional[Value]:
    """The value of a call that yields the global rank or a device string built from it;
    None for any other call (the interpreter's own result stands)."""
    if qualname in GLOBAL_RANK_CALLS:
        if args:
            return None  # a process group's own rank
        return _global_rank(node, f"returned by `{qualname.rsplit('.', 1)[-1]}()`")
    if qualname in LOCAL_RANK_CALLS and not args:
        return Value(Kind.NUMBER, origin=Origin(node, f"returned by `{qualname.rsplit('.', 1)[-1]}()`"), role=Role.LOCAL_RANK)
    if qualname in _ENVIRON_READS:
        role = _rank_variable(args[0][1].literal) if args and args[0][0].keyword is None and args[0][1].kind == Kind.STR else None
        if role is not None:
            name = args[0][1].literal
            return Value(Kind.STR, origin=Origin(node, f"read from the `{name}` environment variable"), role=role)
        return None
    if method is None and callee.kind == Kind.UNKNOWN and callee.is_bare and isinstance(node.func, cst.Name) and node.func.value in ("int", "str"):
        # a conversion keeps what the value is (a local that shadows the builtin has a value)
        if len(args) == 1 and args[0][0].keyword is None and args[0][1].role in RANK_ROLES:
            source = args[0][1]
            return Value(Kind.NUMBER if node.func.value == "int" else Kind.STR, origin=source.origin, role=source.role)
        return None
    if method == "format" and receiver is not None and receiver.kind == Kind.STR and isinstance(receiver.literal, str):
        template = receiver.literal
        if len(args) == 1 and args[0][0].keyword is None and args[0][1].role in RANK_ROLES and template.endswith("{}"):
            if _DEVICE_PREFIX.match(template[:-2]):
                return Value(Kind.STR, origin=args[0][1].origin, role=args[0][1].role)
    return None


def rank_option(node: cst.Call, args: tuple[tuple[cst.Arg, Value], ...]) -> Optional[tuple[str, Value]]:
    """``parser.add_argument("--local_rank", type=int, default=int(os.environ["LOCAL_RANK"]))``:
    the attribute of the parsed arguments that holds a rank, and its value: an option whose
    default is a rank, or the option through which ``torch.distributed.launch`` hands each
    process its local rank. None for any other option."""
    options = [value.literal for arg, value in args if arg.keyword is None and value.kind == Kind.STR and isinstance(value.literal, str)]
    keywords = {arg.keyword.value: value for arg, value in args if arg.keyword is not None}
    destination = keywords.get("dest")
    if destination is not None and isinstance(destination.literal, str):
        name = destination.literal
    else:
        long_options = [option for option in options if option.startswith("--")]
        if not long_options:
            return None
        name = long_options[0][2:].replace("-", "_")
    default = keywords.get("default")
    if default is not None and default.role in RANK_ROLES:
        return name, Value(default.kind, origin=default.origin, role=default.role)
    if LAUNCHER_LOCAL_RANK_OPTIONS & set(options):
        return name, Value(Kind.NUMBER, origin=Origin(node, "the local rank `torch.distributed.launch` passes"), role=Role.LOCAL_RANK)
    return None


def formatted_device(node: cst.FormattedString, parts: list[Value]) -> Value:
    """``f"cuda:{rank}"`` with the global rank: a device string that names the rank as a GPU
    index (marked); any other f-string is a plain string."""
    if len(node.parts) == 2 and len(parts) == 1:
        text, expression = node.parts
        if (
            isinstance(text, cst.FormattedStringText)
            and isinstance(expression, cst.FormattedStringExpression)
            and expression.format_spec is None
            and expression.conversion is None
            and _DEVICE_PREFIX.match(text.value)
            and parts[0].role in RANK_ROLES
        ):
            return Value(Kind.STR, origin=parts[0].origin, role=parts[0].role)
    return Value(Kind.STR)


def formatted_accelerator(node: cst.BaseExpression) -> bool:
    """``f"cuda:{index}"``: an f-string that names an accelerator with an index it fills in
    (the device type is written out, only the ordinal is computed)."""
    if not isinstance(node, cst.FormattedString) or len(node.parts) != 2:
        return False
    text, expression = node.parts
    return (
        isinstance(text, cst.FormattedStringText)
        and isinstance(expression, cst.FormattedStringExpression)
        and _DEVICE_PREFIX.match(text.value) is not None
    )


def concatenated_device(node: cst.BinaryOperation, left: Value, right: Value) -> Optional[Value]:
    """``"cuda:" + str(rank)`` / ``"cuda:%d" % rank`` with the global rank: a device string that
    names the rank as a GPU index (marked); None for any other operation."""
    if left.kind != Kind.STR or not isinstance(left.literal, str):
        return None
    if isinstance(node.operator, cst.Modulo) and right.kind == Kind.CONTAINER and isinstance(right.info, tuple) and len(right.info) == 1:
        right = right.info[0]  # "cuda:%d" % (rank,)
    if right.role not in RANK_ROLES:
        return None
    if isinstance(node.operator, cst.Add) and right.kind == Kind.STR and _DEVICE_PREFIX.match(left.literal):
        return Value(Kind.STR, origin=right.origin, role=right.role)
    if isinstance(node.operator, cst.Modulo) and _PERCENT_TEMPLATE.match(left.literal):
        return Value(Kind.STR, origin=right.origin, role=right.role)
    return None
