"""The device-flow analysis, tested directly on realistic training scripts."""

from __future__ import annotations

import libcst as cst

from devicelint.analysis.flow import FlowAnalyzer
from devicelint.analysis.values import Kind


class _Recorder:
    def __init__(self) -> None:
        self.calls = []

    def on_call(self, event) -> None:
        self.calls.append(event)

    def on_binary(self, event) -> None:
        pass

    def on_expression_statement(self, node, value) -> None:
        pass

    def on_subscript_assign(self, target, value_node, value) -> None:
        pass

    def on_condition(self, node, value) -> None:
        pass

    def on_assign(self, statement, target, value_node, value) -> None:
        pass


def analyse(code: str) -> FlowAnalyzer:
    module = cst.parse_module(code)
    analyzer = FlowAnalyzer(module, _Recorder(), module.code_for_node)
    analyzer.run()
    return analyzer


def function_state(analyzer: FlowAnalyzer, name: str) -> dict:
    for node, state in analyzer.function_states.items():
        if node.name.value == name:
            return state
    raise KeyError(name)


def place(value) -> str:
    if value.device is None:
        return "unknown"
    return value.device.kind


TRAINING_SCRIPT = '''
import torch as t
from torch import nn
from torch.nn import CrossEntropyLoss as CE
from torch.utils.data import DataLoader

device = t.device("cuda" if t.cuda.is_available() else "cpu")
model = nn.Sequential(nn.Linear(10, 10), nn.ReLU())
model.to(device)
criterion = CE(weight=t.tensor([1.0, 2.0]))
loader = DataLoader(dataset, batch_size=32)
table = t.zeros(4, 4)
scale = t.tensor(2.0)
on_gpu = table.cuda()
if flag:
    maybe = table.cuda()
else:
    maybe = table
for x, y in loader:
    last_x = x
    moved_y = y.to(device)
nn = None
shadowed = nn
'''


def test_module_level_facts_of_a_training_script():
    state = analyse(TRAINING_SCRIPT).module_state
    assert state["device"].kind == Kind.DEVICE and place(state["device"]) == "accel"
    assert state["model"].kind == Kind.MODULE and place(state["model"]) == "accel"
    assert state["model"].device.label == "device"
    assert state["criterion"].kind == Kind.CRITERION and place(state["criterion"]) == "cpu"
    assert state["loader"].kind == Kind.LOADER
    assert state["table"].kind == Kind.TENSOR and place(state["table"]) == "cpu" and state["table"].scalar is False
    assert state["scale"].scalar is True
    assert place(state["on_gpu"]) == "accel"
    assert place(state["maybe"]) == "unknown"  # the branches disagree
    assert place(state["last_x"]) == "cpu" and state["last_x"].kind == Kind.TENSOR
    assert place(state["moved_y"]) == "accel"
    assert state["shadowed"].kind != Kind.REF  # a local that shadows an import is no longer torch


def test_origin_records_the_node_that_placed_a_value():
    analyzer = analyse(TRAINING_SCRIPT)
    table = analyzer.module_state["table"]
    assert isinstance(table.origin.node, cst.Call)
    assert analyzer.module.code_for_node(table.origin.node) == "t.zeros(4, 4)"
    assert analyzer.module.code_for_node(analyzer.module_state["model"].origin.node) == "model.to(device)"


def test_self_attributes_from_init_are_seen_in_other_methods():
    code = '''
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.mask = torch.ones(4, 4)
        self.register_buffer("table", torch.zeros(4))

    def forward(self, x):
        proj = self.proj
        mask = self.mask
        table = self.table
        return x

class Deeper(Block):
    def forward(self, x):
        inherited = self.mask
        return x
'''
    analyzer = analyse(code)
    forward = function_state(analyzer, "forward")
    assert forward["proj"].kind == Kind.MODULE and place(forward["proj"]) == "unknown"  # moves with the model
    assert place(forward["mask"]) == "cpu"  # unregistered: stays behind
    assert forward["table"].kind == Kind.TENSOR and place(forward["table"]) == "unknown"  # a buffer moves


def test_loops_reach_a_fixpoint_and_join_with_zero_iterations():
    code = '''
import torch
h = torch.zeros(3, 3)
for step in range(10):
    h = h.cuda()
after = h
'''
    state = analyse(code).module_state
    assert place(state["after"]) == "unknown"


def test_device_scopes_change_what_factories_create():
    code = '''
import torch
with torch.device("cuda"):
    inside = torch.zeros(3)
outside = torch.zeros(3)
torch.set_default_device("cuda:1")
later = torch.ones(2)
'''
    state = analyse(code).module_state
    assert place(state["inside"]) == "accel"
    assert place(state["outside"]) == "cpu"
    assert place(state["later"]) == "accel" and state["later"].device.index == 1


def test_containers_and_comprehensions():
    code = '''
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds)
for i, (x, y) in enumerate(loader):
    pair_x = x
for batch in loader:
    moved = {k: v.to("cuda") for k, v in batch.items()}
    first = batch["input_ids"]
a, b = torch.zeros(2, 3).cuda(), torch.ones(3)
'''
    state = analyse(code).module_state
    assert place(state["pair_x"]) == "cpu"
    assert place(state["first"]) == "cpu"
    assert state["moved"].kind == Kind.CONTAINER
    assert place(state["a"]) == "accel" and place(state["b"]) == "cpu"


def test_modules_passed_to_unknown_code_lose_their_device():
    code = '''
import torch
model = torch.nn.Linear(2, 2)
accelerator.prepare(model)
after = model
'''
    state = analyse(code).module_state
    assert place(state["after"]) == "unknown"


def test_project_classes_are_modules_through_their_bases():
    code = '''
import torch.nn as nn
class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
class Child(Base):
    pass
class Empty(nn.Module):
    def forward(self, x):
        return x
class SelfPlaced(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(2, 2, device=device)
child = Child()
empty = Empty()
placed = SelfPlaced("cuda")
'''
    state = analyse(code).module_state
    assert state["child"].kind == Kind.MODULE and place(state["child"]) == "cpu"
    assert state["empty"].kind == Kind.MODULE and place(state["empty"]) == "unknown"  # no parameters
    assert place(state["placed"]) == "unknown"


def test_a_parameter_annotated_as_a_tensor_is_a_tensor_of_unknown_device():
    code = '''
import torch as t
from torch import Tensor

def step(x: t.Tensor, y: Tensor, z: "t.Tensor", w, *rest: Tensor):
    pass
'''
    state = function_state(analyse(code), "step")
    assert state["x"].kind == Kind.TENSOR and place(state["x"]) == "unknown"
    assert state["y"].kind == Kind.TENSOR
    assert state["z"].kind == Kind.UNKNOWN  # a string annotation is not resolved
    assert state["w"].kind == Kind.UNKNOWN
    assert state["rest"].kind == Kind.UNKNOWN  # *rest is a tuple of tensors, not a tensor
