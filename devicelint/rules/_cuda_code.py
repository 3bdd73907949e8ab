"""How code spells a CUDA device, files written for CUDA alone, code that asks where its
tensors are, and NCCL named as a backend: text facts shared by several rules (DL201, DL205,
DL301, DL302, DL316)."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from devicelint.analysis.names import dotted_name, string_value

#: ``"cuda"`` or ``"cuda:1"``: the literal names CUDA and no other accelerator (see is_cuda_literal)
CUDA_LITERAL = re.compile(r"cuda(:\d+)?")
#: the function asks where its tensors are (``x.is_cuda``, ``x.device.type == "cuda"``)
ASKS_WHERE_IT_RUNS = re.compile(r"\bis_cuda\b|\.device\.type\b|\.type\s*==|== *['\"]cuda")
#: NCCL named as a process group's backend: the name written as a string, or torch's constant
NCCL_NAMED = re.compile(r"""['"]nccl['"]|Backend\.NCCL\b""")
#: code written for CUDA alone: streams, events, graphs, CUDA extensions and kernels
CUDA_ONLY_FILE = re.compile(r"torch\.cuda\.(Stream|stream|Event|graph|CUDAGraph)\b|cpp_extension|^\s*(import|from)\s+(triton|cupy|pycuda)\b|numba\.cuda", re.MULTILINE)


def is_cuda_literal(node: cst.BaseExpression) -> bool:
    """Is ``node`` a string literal naming CUDA (``"cuda"``, ``"cuda:0"``)?"""
    return isinstance(node, cst.SimpleString) and CUDA_LITERAL.fullmatch(str(string_value(node))) is not None


def is_cuda_literal_label(label: str) -> bool:
    """Does a device's label (how the source spells it) name CUDA literally: ``"cuda:0"`` as
    written, or ``cuda`` for a bare ``.cuda()``?"""
    return CUDA_LITERAL.fullmatch(label.strip("'\"")) is not None


def device_argument(node: cst.BaseExpression) -> cst.BaseExpression:
    """``torch.device(x)`` is where ``x`` names: the inner expression; anything else as is."""
    if isinstance(node, cst.Call) and dotted_name(node.func) in ("torch.device", "device") and len(node.args) == 1:
        return node.args[0].value
    return node


def device_spelling(node: cst.BaseExpression) -> Optional[str]:
    """``"cuda"`` for a CUDA device written out (``"cuda:0"``, ``torch.device("cuda")``,
    ``f"cuda:{rank}"``, ``"cuda:{}".format(i)``), ``"cpu"`` for the CPU, else None."""
    node = device_argument(node)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        node = node.func.value
    if isinstance(node, cst.SimpleString):
        text = str(string_value(node))
        if text == "cpu":
            return "cpu"
        return "cuda" if text.startswith("cuda") else None
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        return "cuda" if isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda") else None
    return None

