"""Where a process rank comes from: the values that are the job-wide (global) rank.

A distributed job numbers its processes across every node (``dist.get_rank()``, the ``RANK``
variable torchrun sets, ``SLURM_PROCID`` ...); a GPU index counts the devices of one node
(``LOCAL_RANK``). The two agree only on the first node. The analysis marks values that are the
global rank with ``Role.GLOBAL_RANK`` - by where they come from, never by how a variable is
named - and keeps the mark through ``int(...)`` / ``str(...)`` and assignments. Arithmetic drops
it (``rank % torch.cuda.device_count()`` is a device index again). A device string that is
exactly an accelerator name and the rank (``f"cuda:{rank}"``, ``"cuda:{}".format(rank)``,
``"cuda:" + str(rank)``, ``"cuda:%d" % rank``) is a ``Kind.STR`` carrying the mark and the
rank's origin.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.values import Kind, Origin, Role, UNKNOWN, Value

#: environment variables launchers set to the global rank of the process
GLOBAL_RANK_VARIABLES = frozenset({"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"})
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


def environ_item(qualname: Optional[str], key: Value, node: cst.CSTNode) -> Value:
    """``os.environ["RANK"]``: the global rank (as text); anything else read from the
    environment is unknown."""
    if qualname == "os.environ" and key.kind == Kind.STR and key.literal in GLOBAL_RANK_VARIABLES:
        return Value(Kind.STR, origin=Origin(node, f"read from the `{key.literal}` environment variable"), role=Role.GLOBAL_RANK)
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
    if qualname in _ENVIRON_READS:
        if args and args[0][0].keyword is None and args[0][1].kind == Kind.STR and args[0][1].literal in GLOBAL_RANK_VARIABLES:
            name = args[0][1].literal
            return Value(Kind.STR, origin=Origin(node, f"read from the `{name}` environment variable"), role=Role.GLOBAL_RANK)
        return None
    if method is None and callee.kind == Kind.UNKNOWN and callee.is_bare and isinstance(node.func, cst.Name) and node.func.value in ("int", "str"):
        # a conversion keeps what the value is (a local that shadows the builtin has a value)
        if len(args) == 1 and args[0][0].keyword is None and args[0][1].role is Role.GLOBAL_RANK:
            source = args[0][1]
            return Value(Kind.NUMBER if node.func.value == "int" else Kind.STR, origin=source.origin, role=Role.GLOBAL_RANK)
        return None
    if method == "format" and receiver is not None and receiver.kind == Kind.STR and isinstance(receiver.literal, str):
        template = receiver.literal
        if len(args) == 1 and args[0][0].keyword is None and args[0][1].role is Role.GLOBAL_RANK and template.endswith("{}"):
            if _DEVICE_PREFIX.match(template[:-2]):
                return Value(Kind.STR, origin=args[0][1].origin, role=Role.GLOBAL_RANK)
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
            and parts[0].role is Role.GLOBAL_RANK
        ):
            return Value(Kind.STR, origin=parts[0].origin, role=Role.GLOBAL_RANK)
    return Value(Kind.STR)


def concatenated_device(node: cst.BinaryOperation, left: Value, right: Value) -> Optional[Value]:
    """``"cuda:" + str(rank)`` / ``"cuda:%d" % rank`` with the global rank: a device string that
    names the rank as a GPU index (marked); None for any other operation."""
    if left.kind != Kind.STR or not isinstance(left.literal, str):
        return None
    if isinstance(node.operator, cst.Modulo) and right.kind == Kind.CONTAINER and isinstance(right.info, tuple) and len(right.info) == 1:
        right = right.info[0]  # "cuda:%d" % (rank,)
    if right.role is not Role.GLOBAL_RANK:
        return None
    if isinstance(node.operator, cst.Add) and right.kind == Kind.STR and _DEVICE_PREFIX.match(left.literal):
        return Value(Kind.STR, origin=right.origin, role=Role.GLOBAL_RANK)
    if isinstance(node.operator, cst.Modulo) and _PERCENT_TEMPLATE.match(left.literal):
        return Value(Kind.STR, origin=right.origin, role=Role.GLOBAL_RANK)
    return None
