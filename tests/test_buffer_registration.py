"""register_buffer in the device-flow analysis: a name the module already has is not registered
(PyTorch raises KeyError: attribute '...' already exists)."""

from __future__ import annotations

from devicelint.analysis.values import Kind, Role

from test_analysis import analyse, function_state

_CODE = """
import torch
from torch import nn

class Layer(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mask = torch.ones(n, n)
        self.register_buffer("mask", self.mask)
        self.table = torch.ones(n)
        del self.table
        self.register_buffer("table", torch.ones(n))
        self.register_buffer("scale", torch.ones(n))
        self.scale = torch.ones(n) * 2
        self.register_buffer("scale", self.scale)
"""


def test_a_plain_attribute_of_the_same_name_blocks_register_buffer():
    state = function_state(analyse(_CODE), "__init__")
    assert state["self.mask"].kind == Kind.TENSOR and state["self.mask"].role is None
    assert state["self.mask"].device is not None and state["self.mask"].device.is_cpu


def test_deleted_attributes_and_buffers_are_registered():
    state = function_state(analyse(_CODE), "__init__")
    assert state["self.table"].role is Role.BUFFER
    assert state["self.scale"].role is Role.BUFFER
