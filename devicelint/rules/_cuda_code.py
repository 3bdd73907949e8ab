"""How code spells a CUDA device, and files written for CUDA alone: shared by the rules that
flag CUDA hard-coded where the program could run without it (DL301, DL302)."""

from __future__ import annotations

import re

import libcst as cst

from devicelint.analysis.names import string_value

#: ``"cuda"`` or ``"cuda:1"``: the literal names CUDA and no other accelerator (see is_cuda_literal)
CUDA_LITERAL = re.compile(r"cuda(:\d+)?")
#: code written for CUDA alone: streams, events, graphs, CUDA extensions and kernels
CUDA_ONLY_FILE = re.compile(r"torch\.cuda\.(Stream|stream|Event|graph|CUDAGraph)\b|cpp_extension|^\s*(import|from)\s+(triton|cupy|pycuda)\b|numba\.cuda", re.MULTILINE)


def is_cuda_literal(node: cst.BaseExpression) -> bool:
    """Is ``node`` a string literal naming CUDA (``"cuda"``, ``"cuda:0"``)?"""
    return isinstance(node, cst.SimpleString) and CUDA_LITERAL.fullmatch(str(string_value(node))) is not None


def is_cuda_literal_label(label: str) -> bool:
    """Does a device's label (how the source spells it) name CUDA literally: ``"cuda:0"`` as
    written, or ``cuda`` for a bare ``.cuda()``?"""
    return CUDA_LITERAL.fullmatch(label.strip("'\"")) is not None
