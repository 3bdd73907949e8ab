"""The device-flow analysis, tested directly on realistic training scripts."""

from __future__ import annotations

import libcst as cst
from conftest import lint

from devicelint.analysis.flow import FlowAnalyzer
from devicelint.analysis.values import UNKNOWN, Kind, Role


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

    def on_index(self, node, base, index_node, index) -> None:
        pass

    def on_return(self, node, value) -> None:
        pass

    def on_ndarray_store(self, target, value_node, value) -> None:
        pass

    def on_index_put(self, target, base, index, value_node, value) -> None:
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
    assert place(state["maybe"]) == "accel"  # a GPU run may take the branch that moved it
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
    assert forward["proj"].kind == Kind.MODULE and place(forward["proj"]) == "follows"  # moves with the model
    assert place(forward["mask"]) == "cpu"  # unregistered: stays behind
    assert forward["table"].kind == Kind.TENSOR and place(forward["table"]) == "follows"  # a buffer moves


def test_loops_reach_a_fixpoint_and_join_with_zero_iterations():
    code = '''
import torch
h = torch.zeros(3, 3)
for step in range(10):
    h = h.cuda()
after = h
'''
    state = analyse(code).module_state
    assert place(state["after"]) == "accel"  # on a GPU run the loop has moved it


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


def test_a_parameter_annotated_as_a_tensor_is_a_tensor_where_its_caller_put_it():
    code = '''
import torch as t
from torch import Tensor

def step(x: t.Tensor, y: Tensor, z: "t.Tensor", w, *rest: Tensor):
    pass
'''
    state = function_state(analyse(code), "step")
    assert state["x"].kind == Kind.TENSOR and place(state["x"]) == "follows" and state["x"].device.argument
    assert state["y"].kind == Kind.TENSOR
    assert state["z"].kind == Kind.UNKNOWN  # a string annotation is not resolved
    assert state["w"].kind == Kind.UNKNOWN
    assert state["rest"].kind == Kind.UNKNOWN  # *rest is a tuple of tensors, not a tensor


def test_subclasses_of_subclasses_see_the_attributes_their_bases_set():
    code = '''
import torch
from torch import nn

class Base(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.mask = torch.ones(4, 4)
        self.cache = torch.zeros(2)

    def reset(self):
        self.cache = None

class Middle(Base):
    pass

class Leaf(Middle):
    def forward(self, x):
        mask = self.mask
        proj = self.proj
        cache = self.cache
        return x
'''
    forward = function_state(analyse(code), "forward")
    assert place(forward["mask"]) == "cpu"  # set by Base.__init__, two classes up
    assert forward["proj"].kind == Kind.MODULE
    assert forward["cache"].kind == Kind.UNKNOWN  # another method of Base reassigns it


def test_classes_built_on_well_known_framework_bases_are_modules_placed_by_the_framework():
    code = '''
import lightning.pytorch as pl
from transformers import PreTrainedModel
from torch import nn

class Lit(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

class Encoder(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.fc = nn.Linear(2, 2)

lit = Lit()
encoder = Encoder(config)
'''
    state = analyse(code).module_state
    for name in ("lit", "encoder"):
        assert state[name].kind == Kind.MODULE
        assert place(state[name]) == "unknown"  # the framework decides where it goes


def test_a_list_comprehension_that_moves_every_element():
    code = '''
import torch
from torch.utils.data import DataLoader
loader = DataLoader(ds)
device = torch.device("cuda")
for batch in loader:
    moved = [t.to(device) for t in batch]
    first = moved[0]
    x, y = moved
'''
    state = analyse(code).module_state
    assert place(state["first"]) == "accel"
    assert place(state["x"]) == "accel" and place(state["y"]) == "accel"


HELPERS = '''
import torch
from torch import nn

def make_mask(n):
    return torch.ones(n, n)

def make_on(n, device):
    return torch.zeros(n, device=device)

def like(x):
    return x.new_zeros(x.shape)

def pair(a, b):
    return a.cuda(), b

def maybe(a, flag):
    if flag:
        return a.cuda()
    return a

def sometimes(a, flag):
    if flag:
        return a.cuda()

def steps(a):
    yield a.cuda()

def forever(a):
    return forever(a)

def spread(*args):
    return torch.zeros(3)

cpu = torch.randn(3, 3)
gpu = torch.randn(3, 3, device="cuda")
mask = make_mask(4)
on_gpu = make_on(3, "cuda")
dev = torch.device("cuda:1")
on_dev = make_on(3, device=dev)
follows = like(gpu)
left, right = pair(cpu, cpu)
joined = maybe(cpu, flag)
partial = sometimes(cpu, flag)
generated = steps(cpu)
recursive = forever(cpu)
spread_call = spread(*stuff)
with torch.device("cuda"):
    scoped = make_mask(2)
'''


def test_helpers_are_summarised_for_their_callers():
    state = analyse(HELPERS).module_state
    assert place(state["mask"]) == "cpu" and state["mask"].scalar is False
    assert "in `make_mask()`" in state["mask"].origin.how  # messages say where it was made
    assert place(state["on_gpu"]) == "accel"
    assert place(state["on_dev"]) == "accel" and state["on_dev"].device.index == 1
    assert place(state["follows"]) == "accel"
    assert place(state["left"]) == "accel" and place(state["right"]) == "cpu"
    assert place(state["scoped"]) == "accel"  # the caller's default device applies in the helper
    # a generator: iterating it gives what it yields
    assert state["generated"].kind == Kind.CONTAINER and place(state["generated"].info.element) == "accel"


def test_helpers_the_analysis_cannot_follow_give_unknown():
    state = analyse(HELPERS).module_state
    assert place(state["joined"]) == "accel"  # one path moves it: on a GPU run it may be there
    assert state["partial"].kind == Kind.UNKNOWN  # may return None
    assert state["recursive"].kind == Kind.UNKNOWN
    assert state["spread_call"].kind == Kind.UNKNOWN  # *stuff at the call site: the binding is unknown
    assert place(state["cpu"]) == "cpu"  # pair() did not move the caller's own tensor


def test_methods_static_and_class_methods_are_summarised():
    code = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.table = torch.ones(4)

    def _positions(self, x):
        return torch.arange(x.size(1))

    def _table(self):
        return self.table

    @staticmethod
    def _pad(x):
        return x.new_zeros(2)

    @classmethod
    def _grid(cls, n):
        return torch.zeros(n, n)

    def forward(self, x):
        positions = self._positions(x)
        table = self._table()
        padded = self._pad(positions)
        grid = self._grid(3)
        static_on_class = Net._pad(positions)
        return x

class Other(nn.Module):
    def _positions(self, x):
        return torch.arange(3)

    def forward(self, x):
        overridden = self._positions(x)
        return x

class Child(Other):
    def _positions(self, x):
        return torch.arange(3, device=x.device)
'''
    analyzer = analyse(code)
    forward = next(state for node, state in analyzer.function_states.items() if node.name.value == "forward" and "positions" in state)
    assert place(forward["positions"]) == "cpu"
    assert place(forward["table"]) == "cpu"  # a plain tensor attribute does not follow the model
    assert place(forward["padded"]) == "cpu" and place(forward["static_on_class"]) == "cpu"
    assert place(forward["grid"]) == "cpu"
    other = next(state for node, state in analyzer.function_states.items() if node.name.value == "forward" and "overridden" in state)
    assert other["overridden"].kind == Kind.UNKNOWN  # Child overrides it: which body runs is unknown


def test_a_method_that_writes_an_attribute_leaves_what_it_stored_in_the_callers_view():
    code = '''
import torch

class Holder:
    def refresh(self, device):
        self.buffer = self.buffer.to(device)
        return None

    def step(self):
        self.buffer = torch.ones(3)
        before = self.buffer
        self.refresh("cuda")
        after = self.buffer
'''
    state = function_state(analyse(code), "step")
    assert place(state["before"]) == "cpu"
    assert state["after"].kind == Kind.TENSOR
    assert place(state["after"]) == "accel"


def test_a_method_that_may_not_run_its_write_leaves_the_join_in_the_callers_view():
    code = '''
import torch

class Holder:
    def refresh(self, device, now):
        if now:
            self.buffer = self.buffer.to(device)

    def opaque(self, loader):
        self.buffer = loader.next_buffer()

    def step(self, flag):
        self.buffer = torch.ones(3)
        self.refresh(torch.device("cuda"), flag)
        maybe = self.buffer
        self.opaque(None)
        unknown = self.buffer
'''
    state = function_state(analyse(code), "step")
    # on the path where it does not run, the CPU tensor is left: a tensor that can be on the GPU
    assert state["maybe"].kind == Kind.TENSOR
    assert place(state["maybe"]) != "cpu"
    assert state["unknown"].kind == Kind.UNKNOWN and state["unknown"].device is None


def test_library_layers_and_models_are_module_bases():
    code = '''
import torch
from torch import nn
import torchvision
from timm.models.vision_transformer import VisionTransformer
from transformers import BertForSequenceClassification

class Scaled(nn.Linear):
    def __init__(self):
        super().__init__(4, 4)
        self.extra = nn.Linear(4, 4)

class Backbone(torchvision.models.ResNet):
    pass

class Vit(VisionTransformer):
    pass

class Classifier(BertForSequenceClassification):
    pass

class Weight(nn.Parameter):
    pass

scaled = Scaled()
'''
    analyzer = analyse(code)
    classes = {value.info.name: value.info for value in analyzer.module_state.values() if value.kind == Kind.CLASS}
    assert all(classes[name].is_module for name in ("Scaled", "Backbone", "Vit", "Classifier"))
    assert classes["Classifier"].framework_placed and not classes["Vit"].framework_placed
    assert not classes["Weight"].is_module
    assert place(analyzer.module_state["scaled"]) == "cpu"


def test_parameters_used_as_tensors_are_tensors_and_numpy_like_use_is_not_evidence():
    code = '''
import torch

def centre(positions, masses, counts, table):
    n = positions.size(0)
    weights = masses.unsqueeze(-1)
    rows = counts.shape[0] + table.reshape(-1).sum()
    return n, weights, rows
'''
    state = function_state(analyse(code), "centre")
    assert state["positions"].kind == Kind.TENSOR and state["positions"].device.argument
    assert state["masses"].kind == Kind.TENSOR
    # `.shape`, `.reshape`, `.sum` are numpy's too: no evidence of a torch tensor
    assert state["counts"].kind == Kind.UNKNOWN and state["table"].kind == Kind.UNKNOWN


NEW_USER_SCRIPT = '''
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

def evaluate(model, loader, device):
    preds = []
    for x, y in loader:
        logits = model(x)
        preds.append(logits.argmax(1).numpy())
    return np.concatenate(preds)

def train(model, loader, optimizer, device):
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
    evaluate(model, loader, device)

def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,))), batch_size=8)
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, loader, optimizer, device)

main()
'''


def test_a_function_is_analysed_with_what_its_callers_hand_it():
    analyzer = analyse(NEW_USER_SCRIPT)
    evaluate = function_state(analyzer, "evaluate")
    # the model moved in main() reaches evaluate() through train(), which does not move it
    assert evaluate["model"].kind == Kind.MODULE and place(evaluate["model"]) == "accel"
    assert evaluate["loader"].kind == Kind.LOADER
    assert place(evaluate["logits"]) == "accel"


def test_generators_carry_the_device_they_draw_on():
    analyzer = analyse(
        "import torch\n"
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "seeded = torch.manual_seed(0)\n"
        "plain = torch.Generator().manual_seed(1)\n"
        "on_gpu = torch.Generator('cuda')\n"
        "chosen = torch.Generator(device=device)\n"
        "nothing = torch.cuda.manual_seed(0)\n"
    )
    state = analyzer.module_state
    for name in ("seeded", "plain", "on_gpu", "chosen"):
        assert state[name].kind == Kind.GENERATOR, name
    assert [place(state[name]) for name in ("seeded", "plain", "on_gpu", "chosen")] == ["cpu", "cpu", "accel", "accel"]
    assert state["nothing"].kind != Kind.GENERATOR  # torch.cuda.manual_seed returns None


def test_a_tensor_assigned_to_a_registered_buffer_name_updates_the_buffer():
    code = '''
import torch
from torch import nn

class Rope(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("freqs", torch.zeros(4), persistent=False)
        self.reset()

    def reset(self):
        self.freqs = torch.ones(4)
        self.other = torch.ones(4)
'''
    state = function_state(analyse(code), "reset")
    assert state["self.freqs"].role is Role.BUFFER
    assert state["self.other"].role is None


def test_isinstance_tensor_narrows_each_branch_before_it_runs():
    code = '''
import torch

def prepare(mask, extra):
    mask.unsqueeze(0)
    if isinstance(mask, torch.Tensor):
        kept = mask
    else:
        converted = torch.tensor(mask)
    if isinstance(extra, torch.Tensor):
        seen = extra
'''
    state = function_state(analyse(code), "prepare")
    assert place(state["converted"]) == "cpu"  # not a tensor there: torch.tensor copies host data
    assert state["seen"].kind == Kind.TENSOR


def test_a_plain_class_method_named_like_a_module_method_is_the_files_own():
    # `train`/`to`/`eval` are nn.Module's own only on modules: a trainer's `train(dataset)`
    # is analysed with its caller's arguments
    code = '''
import torch
from torch.utils.data import TensorDataset

class Trainer:
    def train(self, dataset, epochs):
        pass

class Net(torch.nn.Module):
    def train(self, mode=True):
        pass

Trainer().train(TensorDataset(torch.zeros(3)), 2)
Net().train(True)
'''
    analyzer = analyse(code)
    trainer_state = [s for n, s in analyzer.function_states.items() if n.name.value == "train" and "dataset" in s]
    assert trainer_state and trainer_state[0]["dataset"].kind == Kind.DATASET
    assert not any(n.name.value == "train" and "mode" in s and s["mode"].kind == Kind.NUMBER for n, s in analyzer.function_states.items())


CALLABLE_OBJECTS = '''
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


class Predictor:
    def __init__(self, model):
        self.model = model
        self.model.eval()
        self.model.to(device)

    def __call__(self, images):
        with torch.no_grad():
            return self.model(images.to(device))


class Pipeline:
    def __init__(self, model):
        self.predictor = Predictor(model)

    def scores(self, batches):
        for batch in batches:
            yield self.predictor(batch)


pipeline = Pipeline(build_model())
direct = Predictor(build_model())(images)
through_attribute = next(pipeline.scores(loader))
'''


def test_objects_with_a_call_method_are_summarised_when_called():
    # `Predictor(...)(x)` and `self.predictor(x)` run `__call__` (whose `return` sits in a
    # `with` block); `pipeline.scores` is called at module level before `Pipeline.__init__`
    # has had its own analysis, so that `__init__` is previewed for `self.predictor`
    state = analyse(CALLABLE_OBJECTS).module_state
    assert state["direct"].kind == Kind.TENSOR and place(state["direct"]) == "accel"
    assert state["through_attribute"].kind == Kind.TENSOR and place(state["through_attribute"]) == "accel"


ACCUMULATORS = '''
import torch
from my_models import Net

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
total = 0
maybe = None
for features in loader:
    outputs = model(features.to(device))
    _, predicted = torch.max(outputs, 1)
    total += (predicted == 1).sum()
    if flag:
        maybe = predicted
'''


def test_a_number_accumulating_tensors_is_a_tensor_after_the_loop():
    state = analyse(ACCUMULATORS).module_state
    # `outputs` of a moved model of unknown class: a tensor once torch.max takes it
    assert state["outputs"].kind == Kind.TENSOR and place(state["outputs"]) == "accel"
    assert state["total"].kind == Kind.TENSOR and place(state["total"]) == "accel"
    # None is no accumulator: None or a tensor stays unknown
    assert state["maybe"].kind == Kind.UNKNOWN


def test_appending_to_a_list_held_in_a_dict_of_lists():
    code = '''
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
history = {"train": [], "validation": []}
for phase in ["train", "validation"]:
    history[phase].append(torch.zeros(3, device=device).sum())
'''
    history = analyse(code).module_state["history"]
    lists = history.info.element
    assert lists.kind == Kind.CONTAINER and place(lists.info.element) == "accel"


def test_legacy_type_casts_move_the_tensor():
    code = '''
import torch
gpu = torch.zeros(3, device="cuda")
host = gpu.type(torch.LongTensor)
back = host.type("torch.cuda.FloatTensor")
same = gpu.type(torch.float16)
'''
    state = analyse(code).module_state
    assert place(state["host"]) == "cpu"
    assert place(state["back"]) == "accel"
    assert place(state["same"]) == "accel"  # a dtype: the device stays


def test_a_cast_to_another_tensors_type_string_keeps_a_tensor_where_that_tensor_is():
    code = '''
import torch
gpu = torch.zeros(3, device="cuda")
host = torch.ones(3)
kept = torch.arange(3, device=gpu.device).type(gpu.type())
brought = host.type(gpu.type())
stays = host.type(host.type())
'''
    state = analyse(code).module_state
    assert state["kept"].kind == Kind.TENSOR and state["kept"].device == state["gpu"].device
    assert place(state["brought"]) == "accel"  # a CUDA type string: the tensor goes to a GPU
    assert place(state["stays"]) == "cpu"


def test_a_summary_takes_only_the_branch_its_boolean_arguments_choose():
    code = '''
import torch

def rotary(dim, use_real=False):
    freqs = torch.zeros(dim, device="cuda")
    if use_real:
        return freqs.cos(), freqs.sin()
    return freqs

complex_form = rotary(8)
real_form = rotary(8, use_real=True)
'''
    state = analyse(code).module_state
    assert state["complex_form"].kind == Kind.TENSOR
    # with use_real=True the tuple is returned (code after a returning branch is not pruned)
    assert state["real_form"].kind != Kind.TENSOR


def test_the_files_own_analysis_keeps_both_branches_of_a_literal_flag():
    code = '''
import torch
use_gpu = False
model = torch.nn.Linear(2, 2)
if use_gpu:
    model = model.cuda()
'''
    # a literal flag at module level is configuration: the GPU path stays possible
    assert place(analyse(code).module_state["model"]) == "accel"


NESTED_ITEMS_SCRIPT = '''
import torch
from torch.utils.data import DataLoader, Dataset

class Pairs(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, index):
        if index % 2:
            return (torch.zeros(3), torch.ones(3)), {"id": index}, index
        return [torch.ones(3), torch.zeros(3)], {"id": -index}, index

def run(loader):
    for pair, meta, label in loader:
        first = pair[0]
    for batch in loader:
        nested = batch[0]
        mapping = batch[1]
        last = batch[-1]

run(DataLoader(Pairs(), batch_size=2))
'''


def test_default_collation_keeps_the_shape_of_each_position_of_a_dataset_item():
    state = function_state(analyse(NESTED_ITEMS_SCRIPT), "run")
    # `(a, b)` / `[a, b]` at a position in every return: collated into a list of batched tensors
    assert state["pair"].kind == Kind.BATCH and state["pair"].role is Role.SEQUENCE_BATCH
    assert state["nested"].kind == Kind.BATCH and state["nested"].role is Role.SEQUENCE_BATCH
    assert state["meta"].role is Role.MAPPING_BATCH and state["mapping"].role is Role.MAPPING_BATCH
    # a number (or tensor) collates into one batched tensor, and an element of the list is a tensor
    assert state["label"].kind == Kind.TENSOR and state["last"].kind == Kind.TENSOR
    assert state["first"].kind == Kind.TENSOR


def test_a_position_the_returns_disagree_on_is_not_a_collated_list():
    code = NESTED_ITEMS_SCRIPT.replace("[torch.ones(3), torch.zeros(3)]", "torch.ones(2, 3)")
    state = function_state(analyse(code), "run")
    assert state["pair"].kind == Kind.TENSOR and state["nested"].kind == Kind.TENSOR
    assert state["meta"].role is Role.MAPPING_BATCH


CONSTRUCTED_SCRIPT = '''
import torch

class Probe:
    def __init__(self, model, example):
        self.model = model
        self.example = example

    def run(self):
        return self.model(self.example)

def make_probe(model, device):
    tokens = torch.zeros(4, 8, device=device)
    return Probe(model, (tokens, tokens))
'''


def test_a_plain_class_init_is_analysed_with_what_its_constructor_calls_hand_it():
    analyzer = analyse(CONSTRUCTED_SCRIPT)
    init = function_state(analyzer, "__init__")
    # `Probe(model, (tokens, tokens))` in make_probe, which nothing calls: __init__ waits for it
    assert init["example"].kind == Kind.CONTAINER and init["self.example"].kind == Kind.CONTAINER


def test_a_module_init_takes_configuration_not_its_callers_values():
    code = CONSTRUCTED_SCRIPT.replace("import torch\n", "import torch\nimport torch.nn as nn\n").replace("class Probe:", "class Probe(nn.Module):")
    init = function_state(analyse(code), "__init__")
    assert init["example"].kind == Kind.UNKNOWN


APPENDED_AMONG_UNKNOWN_SCRIPT = '''
import torch

def propagate(adjacency, embedding, layers):
    adjacency = torch.as_tensor(adjacency, device="cuda")
    current = embedding
    outputs = [current]
    for _ in range(layers):
        current = torch.sparse.mm(adjacency, current)
        outputs.append(current)
    return outputs
'''


def test_a_gpu_tensor_appended_among_elements_of_unknown_kind_is_remembered():
    from devicelint.analysis.values import Homogeneous

    outputs = function_state(analyse(APPENDED_AMONG_UNKNOWN_SCRIPT), "propagate")["outputs"]
    # the display `[current]` and the appended tensors join into elements of unknown kind, but
    # the list is known to hold a GPU tensor once the loop ran (numpy fails on it)
    assert outputs.kind == Kind.CONTAINER and isinstance(outputs.info, Homogeneous)
    assert outputs.info.element.kind == Kind.UNKNOWN
    assert outputs.info.some is not None and place(outputs.info.some) == "accel"


def test_a_list_of_host_tensors_appended_has_no_gpu_element():
    from devicelint.analysis.values import Homogeneous

    code = APPENDED_AMONG_UNKNOWN_SCRIPT.replace('device="cuda"', 'device="cpu"')
    outputs = function_state(analyse(code), "propagate")["outputs"]
    assert isinstance(outputs.info, Homogeneous) and outputs.info.some is None


def test_a_device_that_is_the_host_on_one_path_and_the_accelerator_on_another_is_chosen_at_run_time():
    code = '''
import torch
def detect_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    return torch.device("cpu")
chosen = detect_device()
if use_gpu:
    picked = torch.device("cuda")
else:
    picked = torch.device("cpu")
fixed = torch.device("cuda")
'''
    state = analyse(code).module_state
    assert state["chosen"].kind == Kind.DEVICE and state["chosen"].role is Role.RUN_TIME_CHOICE
    assert state["picked"].role is Role.RUN_TIME_CHOICE
    assert state["fixed"].role is None  # one device on every path


def test_a_module_level_exec_of_code_read_at_run_time_makes_earlier_devices_defaults():
    code = '''
import torch
device = "cuda"
batch_size = 12
exec(open("configurator.py").read())
'''
    state = analyse(code).module_state
    assert state["device"].role is Role.RUN_TIME_CHOICE
    assert state["batch_size"].role is None  # not a device
    literal = analyse('import torch\ndevice = "cuda"\nexec("x = 1")\n').module_state
    assert literal["device"].role is None  # what a literal binds is in the source


def test_a_parameter_handed_to_a_helper_that_uses_it_as_a_tensor_is_a_tensor():
    code = '''
import torch
from torch import nn

def _inflate(tensor, times):
    return tensor.repeat(times, *([1] * (tensor.dim() - 1)))

def _converted(values):
    values = torch.as_tensor(values)
    return values.unsqueeze(0)

def _twice(x, k):
    return _inflate(x, k)

def top_k(hidden, scores, beams, k=2):
    tiled = _inflate(hidden, beams)
    other = _converted(scores)
    deeper = _twice(k=beams, x=scores)
    return tiled, other

class Tools:
    @staticmethod
    def pad(x, width):
        return x.new_zeros(width)

class Loss(nn.Module):
    def forward(self, lengths, other, extra):
        a = self._mask(lengths)
        b = Tools.pad(other, 3)
        return a, b, extra

    def _mask(self, lengths):
        return lengths.unsqueeze(1)
'''
    analyzer = analyse(code)
    top_k = function_state(analyzer, "top_k")
    assert top_k["hidden"].kind == Kind.TENSOR and top_k["hidden"].device.argument  # `tensor.dim()` in _inflate
    assert top_k["scores"].kind == Kind.TENSOR  # handed on two levels down, by keyword
    assert top_k["beams"].kind == Kind.UNKNOWN  # `times` is no tensor
    twice = function_state(analyzer, "_twice")
    assert twice["x"].kind == Kind.TENSOR
    forward = function_state(analyzer, "forward")
    assert forward["lengths"].kind == Kind.TENSOR and place(forward["lengths"]) == "follows"  # self._mask(...)
    assert forward["other"].kind == Kind.TENSOR  # Tools.pad(...)
    assert forward["extra"].kind == Kind.UNKNOWN


def test_a_helper_that_rebinds_its_parameter_by_a_tensor_method_of_it_still_says_it_is_a_tensor():
    # robomimic's repeat_by_expand_at: `x = x.unsqueeze(dim + 1)` at the top of the helper is
    # a tensor use of what came in; a rebinding to anything else (`torch.as_tensor(values)`,
    # `np.asarray(...)`) leaves what came in unknown
    code = '''
import numpy as np
import torch
from torch import nn

def repeat_by_expand_at(x, repeats, dim=0):
    x = x.unsqueeze(dim + 1)
    shape = list(x.shape)
    shape[dim + 1] = repeats
    return x.expand(*shape).reshape(-1, *x.shape[dim + 2:])

def flattened(x):
    x = x.float().view(x.size(0), -1)
    return x

def converted(values):
    values = np.asarray(values)
    values = torch.from_numpy(values)
    return values.unsqueeze(0)

class Randomizer(nn.Module):
    def forward(self, inputs, other, rows):
        out = repeat_by_expand_at(inputs, repeats=3)
        return out, flattened(other), converted(rows)
'''
    forward = function_state(analyse(code), "forward")
    assert forward["inputs"].kind == Kind.TENSOR and place(forward["inputs"]) == "follows"
    assert forward["out"].kind == Kind.TENSOR and place(forward["out"]) == "follows"
    assert forward["other"].kind == Kind.TENSOR  # a cast, then a tensor-only method, of itself
    assert forward["rows"].kind == Kind.UNKNOWN


def test_a_base_class_method_calling_self_method_hands_its_arguments_to_the_subclasses_definitions():
    # cornucopia's transforms: `Transform.__call__` runs `self.make_final(x)`, which only its
    # subclasses define; robomimic's randomizers: `forward_in` runs the override `_forward_in`
    code = '''
import torch
from torch import nn

class Transform:
    def __call__(self, x):
        return self.make_final(x).xform(x)

class Lookup(Transform):
    def make_final(self, x):
        lo, hi = x.min(), x.max()
        self.mu = torch.rand(4) * (hi - lo) + lo
        return self

    def xform(self, x):
        return x

class Randomizer(nn.Module):
    def forward(self, inputs):
        return self._forward_in(inputs.unsqueeze(0))

    def _forward_in(self, inputs):
        raise NotImplementedError

class Noise(Randomizer):
    def _forward_in(self, inputs):
        return inputs + 1

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
image = torch.rand(2, 16, device=device)
Lookup()(image)
'''
    analyzer = analyse(code)
    states = [state for node, state in analyzer.function_states.items() if node.name.value == "make_final"]
    assert len(states) == 1 and states[0]["x"].kind == Kind.TENSOR and place(states[0]["x"]) == "accel"
    assert states[0]["hi"].kind == Kind.TENSOR and place(states[0]["hi"]) == "accel"
    findings = {(finding.code, finding.line) for finding in lint(code)}
    assert ("DL202", 12) in findings  # the host vector meets a 0-dim tensor on the GPU
    override = next(
        state for node, state in analyzer.function_states.items() if "inputs + 1" in cst.Module([]).code_for_node(node)
    )
    assert place(override["inputs"]) == "follows"  # what the base's forward hands the override


def test_a_parameter_the_helper_converts_first_is_not_taken_for_a_tensor():
    code = '''
import torch

def _converted(values):
    values = torch.as_tensor(values)
    return values.unsqueeze(0)

def run(scores):
    return _converted(scores)
'''
    assert function_state(analyse(code), "run")["scores"].kind == Kind.UNKNOWN


def test_meshgrid_gives_one_grid_per_input_each_with_dimensions():
    code = '''
import torch

def grid(n: int):
    rows, cols = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    both = torch.meshgrid(torch.arange(n), torch.arange(n))
'''
    state = function_state(analyse(code), "grid")
    for name in ("rows", "cols"):
        assert state[name].kind == Kind.TENSOR and place(state[name]) == "cpu" and state[name].scalar is False
    assert state["both"].kind == Kind.CONTAINER and len(state["both"].info) == 2


def test_a_legacy_cuda_typed_constructor_makes_a_gpu_tensor():
    analyzer = analyse("import torch\ncodes = torch.cuda.FloatTensor([[0.0, 1.0]])\nsizes = torch.cuda.LongTensor(4)\n")
    for name in ("codes", "sizes"):
        value = analyzer.module_state[name]
        assert value.kind == Kind.TENSOR and place(value) == "accel" and value.scalar is False


def test_torch_is_tensor_narrows_like_isinstance():
    code = (
        "import numpy as np\nimport torch\ndef to_numpy(x):\n    if torch.is_tensor(x):\n        return x.cpu().numpy()\n"
        "    y = x\n    return np.asarray(y)\nto_numpy(torch.ones(3, device='cuda'))\n"
    )
    assert function_state(analyse(code), "to_numpy")["y"].kind == Kind.UNKNOWN


def _numpy_reads(code: str, helper: str) -> set[str]:
    analyzer = analyse(code)
    function = next(node for node in analyzer.function_states if node.name.value == helper)
    return set(analyzer._numpy_read_parameters(function))


def test_parameters_a_helper_hands_to_numpy_on_every_path():
    code = (
        "import numpy as np\nimport torch\nfrom matplotlib import pyplot as plt\n"
        "def plot(img, path, labels, title=None):\n    if title is not None:\n        plt.title(title)\n"
        "    with open(path, 'wb'):\n        plt.imshow(img)\n    plt.scatter([0], [1], c=labels)\n"
    )
    # `title` reaches matplotlib under an `if` only
    assert _numpy_reads(code, "plot") == {"img", "labels"}


def test_parameters_numpy_reads_only_on_some_paths_or_after_a_rebinding_are_not_summarised():
    code = (
        "import numpy as np\nimport torch\n"
        "def after_return(x):\n    if torch.is_tensor(x):\n        return x.cpu().numpy()\n    return np.asarray(x)\n"
        "def rebound(x):\n    x = x.cpu()\n    return np.asarray(x)\n"
        "def conditional(x, flag):\n    return np.asarray(x) if flag else x\n"
        "def short_circuit(x):\n    return x is None or np.asarray(x)\n"
    )
    for helper in ("after_return", "rebound", "conditional", "short_circuit"):
        assert _numpy_reads(code, helper) == set(), helper


def test_a_modules_own_call_unpacks_what_its_forward_returns():
    code = (
        "import torch\nfrom torch import nn\nclass Matcher(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(8, 8)\n"
        "    def forward(self, a):\n        scores = self.proj(a)\n        return scores.max(1).indices, torch.zeros(3)\n"
        "    def evaluate(self, a):\n        indices, zeros = self(a)\n        return indices\n"
    )
    state = function_state(analyse(code), "evaluate")
    assert state["indices"].kind == Kind.TENSOR and state["indices"].device.label == "the model's device"
    assert place(state["zeros"]) == "cpu"


def test_a_list_remembers_the_append_that_put_a_gpu_tensor_in():
    code = (
        "import torch\nhistory = {'train': [], 'val': []}\nlosses = []\n"
        "for step in range(3):\n    loss = torch.ones(4, device='cuda').sum()\n    total = loss + loss\n"
        "    losses.append(total)\n    history['train'].append(total)\n    losses.append(1.0)\n"
    )
    analyzer = analyse(code)
    losses = analyzer.module_state["losses"]
    put_by = losses.info.put_by
    assert put_by is not None and analyzer.module.code_for_node(put_by) == "losses.append(total)"
    # two 0-dim tensors make a 0-dim one
    assert analyzer.module_state["total"].scalar is True
    inner = analyzer.module_state["history"].info.element
    assert analyzer.module.code_for_node(inner.info.put_by) == "history['train'].append(total)"

def test_broadcast_all_keeps_each_tensor_where_it_is_and_puts_numbers_beside_the_first():
    code = '''
import torch
from torch.distributions.utils import broadcast_all

loc = torch.zeros(3, device="cuda")
scale_number = 2.0
low, high = broadcast_all(loc, scale_number)
(alone,) = broadcast_all(torch.ones(3))
'''
    state = analyse(code).module_state
    assert state["low"].kind == Kind.TENSOR and place(state["low"]) == "accel"
    assert state["high"].kind == Kind.TENSOR and place(state["high"]) == "accel"  # made on loc's device
    assert place(state["alone"]) == "cpu"


def test_only_a_module_constructor_builds_module_tensors():
    code = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()

class Summary:
    def __init__(self, outputs):
        self.outputs = outputs

    def report(self):
        pass
'''
    analyzer = analyse(code)
    inits = [node for node in analyzer.function_states if node.name.value == "__init__"]
    assert len(inits) == 2
    net_init = next(node for node in inits if len(node.params.params) == 1)
    summary_init = next(node for node in inits if len(node.params.params) == 2)
    report = next(node for node in analyzer.function_states if node.name.value == "report")
    assert analyzer.constructs_module(net_init)
    assert not analyzer.constructs_module(summary_init)  # its arguments are placed by whoever builds it
    assert not analyzer.constructs_module(report)


def test_a_dataclass_object_carries_the_values_its_construction_gave_its_fields():
    code = '''
import torch
from dataclasses import dataclass
from typing import ClassVar

@dataclass
class Frame:
    rotations: torch.Tensor
    scale: ClassVar[float] = 1.0
    translations: torch.Tensor = None

def build(x: torch.Tensor, flag):
    by_position = Frame(torch.eye(3), x)
    by_keyword = Frame(translations=torch.zeros(3), rotations=x)
    rotations = by_position.rotations
    translations = by_position.translations
    keyword_translations = by_keyword.translations
    if flag:
        by_position = Frame(x, x)
    after_branch = by_position.rotations
'''
    state = function_state(analyse(code), "build")
    assert place(state["rotations"]) == "cpu"  # torch.eye without device=
    assert state["translations"].kind == Kind.TENSOR and place(state["translations"]) == "follows"  # the argument x
    assert place(state["keyword_translations"]) == "cpu"
    assert state["by_keyword"].field_value("scale") is None  # a class variable is no field
    # two objects meet: what either path gave the fields is no longer known
    assert state["after_branch"].kind != Kind.TENSOR or place(state["after_branch"]) != "cpu"


def test_text_by_its_form_and_not_tensor_splits():
    import libcst as cst

    from devicelint.analysis.summaries import is_text

    def expression(code: str) -> cst.BaseExpression:
        return cst.parse_expression(code)

    for text in ('"a"', 'f"{i}"', "str(i)", "name.strip()", '"/".join(parts)', 'folder.split("/")[0]', "line.split()[1]"):
        assert is_text(expression(text)), text
    for other in ("x.split(2)[0]", "torch.zeros(3)", "name", "x[0]", "str"):
        assert not is_text(expression(other)), other


def test_arms_of_a_chain_that_move_different_values_are_recorded():
    code = '''
import torch
x = torch.randn(8, 4)
y = torch.randn(8)
z = torch.randn(8)
if gpu:
    x = x.cuda()
elif mps:
    y = y.to("mps")
    z = z.to("mps")
else:
    pass
'''
    state = analyse(code).module_state
    x, y, z = (state[name].device for name in "xyz")
    assert x.only_on is not None and y.only_on is not None and z.only_on is not None
    assert x.only_on.placed == {0} and y.only_on.placed == {1} == z.only_on.placed
    assert x.only_on.moving == {0, 1} and x.only_on.chain is y.only_on.chain
    assert len(x.only_on.arms) == 3
    # the arms put y on different accelerators than x, but each is on one of them there
    assert y.kind == "accel" and y.index is None


def test_a_chain_that_moves_its_values_together_records_no_arms():
    code = '''
import torch
x = torch.randn(8, 4)
y = torch.randn(8)
if gpu:
    x = x.cuda()
    y = y.cuda()
elif mps:
    x = x.to("mps")
    y = y.to("mps")
'''
    state = analyse(code).module_state
    assert state["x"].device.only_on is None and state["y"].device.only_on is None


def test_an_arm_that_leaves_the_block_is_not_an_arm_where_paths_meet():
    code = '''
import torch
def f(xs, ys):
    for x, y in zip(xs, ys):
        x = torch.randn(8, 4)
        y = torch.randn(8)
        if gpu:
            x = x.cuda()
        else:
            y = y.cuda()
            continue
        after_x, after_y = x, y
'''
    state = function_state(analyse(code), "f")
    assert state["after_x"].device.only_on is None and state["after_y"].device.only_on is None


def test_a_value_moved_on_some_arms_and_placed_otherwise_on_another_path_loses_its_arms():
    code = '''
import torch
x = torch.randn(8, 4)
y = torch.randn(8)
if gpu:
    x = x.cuda()
else:
    y = y.cuda()
tagged = x
if flag:
    x = torch.randn(8, 4).cuda()
'''
    state = analyse(code).module_state
    assert state["tagged"].device.only_on is not None
    assert state["x"].device.kind == "accel" and state["x"].device.only_on is None


def test_lists_that_hold_host_placeholders_beside_accelerator_entries():
    code = '''
import torch
def fill(x: torch.Tensor, rows):
    skipped = [torch.zeros(0, 6)] * 4
    every = [torch.zeros(0, 6)] * 4
    inner = [torch.zeros(0, 6)] * 4
    for i in range(4):
        for r in rows:
            if r:
                continue
        every[i] = x[i]
        if rows:
            skipped[i] = x[i]
    for i in range(4):
        inner[i] = x[i]
    stats = []
    for r in rows:
        stats.append((x, *torch.zeros((2, 0))))
        stats.append((x, x, x))
    columns = zip(*stats)
'''
    state = function_state(analyse(code), "fill")
    # a store some iterations skip leaves placeholders; a nested loop's `continue` skips nothing here
    assert state["skipped"].info.apart is not None and state["skipped"].info.apart.position is None
    # a store every iteration makes forgets the list's entries, as any other store does
    assert state["every"].info is None and state["inner"].info is None
    # `*torch.zeros((2, 0))` is two rows; the rows disagree at positions 1 and 2
    assert state["stats"].info.apart is not None and state["stats"].info.apart.position in (1, 2)
    column = state["columns"].info.element
    assert column.info.apart is not None and column.info.apart.position is None


def test_an_attribute_of_an_argument_read_into_a_local_used_as_a_tensor_is_placed_by_the_caller():
    analyzer = analyse(
        "import torch\n"
        "def adjust(state, positions):\n"
        "    system_idx = state.system_idx\n"
        "    counts = torch.bincount(system_idx.long())\n"
        "    name = state.name\n"
        "    return positions, counts, name\n"
    )
    state = function_state(analyzer, "adjust")
    assert state["system_idx"].kind == Kind.TENSOR
    assert state["system_idx"].device is not None and state["system_idx"].device.argument
    assert state["system_idx"].device.label == "state.system_idx"
    # read into a local that is never used as a tensor: nothing is said of it
    assert state["name"].kind == Kind.UNKNOWN


def test_an_aliased_attribute_rebound_in_the_body_is_no_evidence():
    analyzer = analyse(
        "import torch\n"
        "def adjust(state):\n"
        "    idx = state.idx\n"
        "    idx = idx.long()\n"
        "    return idx\n"
    )
    # bound twice: the local's uses do not all see the attribute's object
    assert function_state(analyzer, "adjust")["idx"].device is None


def test_object_an_imported_class_builds_in_a_module_init_is_a_submodule_once_called_with_a_tensor():
    analyzer = analyse(
        "import torch\nfrom torch import nn\nfrom esm.decoder import TransformerDecoder\nfrom esm.util import Converter\n"
        "class Model(nn.Module):\n    def __init__(self, args):\n        super().__init__()\n"
        "        self.decoder = TransformerDecoder(args, nn.Embedding(4, 8))\n        self.converter = Converter(args)\n"
        "    def sample(self, n):\n        tokens = torch.zeros(1, n, dtype=torch.long)\n"
        "        out = self.decoder(tokens)\n        labels = self.converter(n)\n        return out\n"
    )
    state = function_state(analyzer, "sample")
    assert state["out"].kind == Kind.TENSOR and state["out"].device.label == "the model's device"
    assert state["labels"].kind == Kind.UNKNOWN  # called with no tensor: nothing says it is a module


def test_module_parameter_of_a_free_function_follows_its_caller_and_deepcopy_keeps_it():
    analyzer = analyse(
        "import torch\nfrom copy import deepcopy\ndef info(model, other):\n"
        "    n = sum(p.numel() for p in model.parameters())\n    clone = deepcopy(model)\n"
        "    other.eval()\n    return n\n"
        "def rebinds(model):\n    model = model.module\n    return list(model.parameters())\n"
    )
    state = function_state(analyzer, "info")
    assert state["model"].kind == Kind.MODULE and state["model"].device.argument and state["model"].device.label == "model"
    assert state["clone"].kind == Kind.MODULE and state["clone"].device == state["model"].device
    assert place(state["other"]) == "unknown"  # `.eval()` alone: trainers and environments have it too
    assert place(function_state(analyzer, "rebinds")["model"]) == "unknown"


def test_a_tensor_or_none_is_the_tensor_only_where_none_is_ruled_out():
    analyzer = analyse(
        "import torch\n"
        "def fit(use_weights):\n"
        "    weights = torch.tensor([1., 3.]) if use_weights else None\n"
        "    maybe = weights\n"
        "    if weights is not None:\n"
        "        given = weights\n"
        "    if weights is None:\n"
        "        pass\n"
        "    else:\n"
        "        other = weights\n"
    )
    state = function_state(analyzer, "fit")
    assert state["maybe"].kind == Kind.UNKNOWN  # not taken for a tensor where it is used
    assert state["given"].kind == Kind.TENSOR and place(state["given"]) == "cpu"
    assert state["other"].kind == Kind.TENSOR and place(state["other"]) == "cpu"


def test_none_on_one_path_and_a_tensor_on_the_other_is_a_tensor_or_none():
    analyzer = analyse(
        "import torch\n"
        "from torch import nn\n"
        "class Loss(nn.Module):\n"
        "    def __init__(self, class_weight=None):\n"
        "        super().__init__()\n"
        "        self.class_weight = None\n"
        "        if class_weight is not None:\n"
        "            self.class_weight = torch.Tensor(class_weight)\n"
        "    def forward(self, x):\n"
        "        maybe = self.class_weight\n"
        "        if self.class_weight is not None:\n"
        "            given = self.class_weight\n"
        "def run(steps):\n"
        "    hidden = None\n"
        "    for _ in range(steps):\n"
        "        hidden = torch.zeros(3)\n"
        "    after = hidden\n"
    )
    state = function_state(analyzer, "forward")
    assert state["maybe"].kind == Kind.UNKNOWN  # not taken for a tensor where it is used
    assert state["given"].kind == Kind.TENSOR and place(state["given"]) == "cpu"
    state = function_state(analyzer, "run")
    assert state["after"].kind == Kind.UNKNOWN and place(state["after"].info.tensor) == "cpu"


def test_a_default_tensor_for_a_parameter_left_at_none_is_what_that_call_works_with():
    analyzer = analyse(
        "import torch\n"
        "from torch import nn\n"
        "class Metric(nn.Module):\n"
        "    def update(self, preds, weights=None):\n"
        "        weights = torch.ones(3) if weights is None else weights\n"
        "        return preds * weights.view(-1, 1)\n"
        "    def reset(self, preds, mask=None):\n"
        "        if mask is None:\n"
        "            mask = torch.ones(3)\n"
        "        return preds * mask.float()\n"
    )
    assert place(function_state(analyzer, "update")["weights"]) == "cpu"
    assert place(function_state(analyzer, "reset")["mask"]) == "cpu"


def test_a_known_generator_is_never_none_and_has_its_device():
    analyzer = analyse(
        "import torch\n"
        "g = torch.Generator('cpu')\n"
        "draw_on = g.device if g is not None else 'cuda'\n"
        "fallback = 'cuda' if g is None else g.device\n"
    )
    for name in ("draw_on", "fallback"):
        value = analyzer.module_state[name]
        assert value.kind == Kind.DEVICE and place(value) == "cpu", name


def test_a_diffusers_pipeline_of_the_file_keeps_its_class_when_loaded_and_moved():
    analyzer = analyse(
        "import torch\n"
        "from diffusers import DiffusionPipeline\n"
        "class Pyramid(DiffusionPipeline):\n"
        "    def __call__(self, latents, generator=None):\n"
        "        seen = generator\n"
        "        return latents\n"
        "pipe = Pyramid.from_pretrained('org/model').to('cuda')\n"
        "video = pipe(torch.randn(4), generator=torch.Generator('cpu'))\n"
    )
    pipe = analyzer.module_state["pipe"]
    assert pipe.info is not None and pipe.info.name == "Pyramid" and pipe.device.is_accel
    seen = function_state(analyzer, "__call__")["seen"]
    assert seen.kind == Kind.GENERATOR and place(seen) == "cpu"


def test_a_move_at_the_end_of_a_chain_of_self_returning_module_methods_moves_the_module():
    # `model.eval().cpu()`: eval() returns the module itself, so the module is on the host
    # after it (pytorch/examples fast_neural_style saves its state there)
    code = '''
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(2, 2).to(device)
model.eval().cpu()
on_host = model
model.to(device).train()
back = model
'''
    state = analyse(code).module_state
    assert state["on_host"].kind == Kind.MODULE and place(state["on_host"]) == "cpu"
    assert place(state["back"]) != "cpu"


DRAWN_FROM_ARGUMENTS = '''
import torch
from torch import nn

def assign(p, targets, boxes, table, plain):
    rows = boxes[0]
    labels = table[0]
    labels = labels.long()
    other = plain[1]
    other = other + 1
    for i, pi in enumerate(p):
        fg_pred = pi[targets, i]
        pxy = fg_pred[:, :2].sigmoid()
    return pxy, rows[:, 1].sigmoid(), other

class Head(nn.Module):
    def forward(self, feats):
        first = feats[0]
        return first[:, 0].sigmoid()

def rebinds(batch):
    batch = list(batch)
    row = batch[0]
    return row[:, 0].sigmoid()
'''


def test_an_index_of_an_argument_used_as_a_tensor_is_where_the_caller_put_it():
    analyzer = analyse(DRAWN_FROM_ARGUMENTS)
    state = function_state(analyzer, "assign")
    assert state["pxy"].kind == Kind.TENSOR and state["pxy"].device.argument and state["pxy"].device.label == "p"
    assert state["rows"].kind == Kind.TENSOR and state["rows"].device.label == "boxes"
    # bound twice, or never used as a tensor: what indexing gave stays unknown
    assert state["labels"].device is None and state["other"].kind != Kind.TENSOR
    # the indexed row's own kind is not known: a dict keyed by tuples gives tensors too
    assert state["pi"].kind == Kind.UNKNOWN
    head = function_state(analyzer, "forward")
    assert head["first"].kind == Kind.TENSOR and place(head["first"]) == "follows" and not head["first"].device.argument
    # a parameter rebound before it is indexed may be anything the function made of it
    assert function_state(analyzer, "rebinds")["row"].kind == Kind.UNKNOWN


KEPT_OBJECT_STEPS = '''
import torch
from torch import nn

class Beam(nn.Module):
    def __init__(self, decoder, tokenizer):
        super().__init__()
        self.decoder = decoder
        self.tokenizer = tokenizer

    def forward(self, hidden, outputs, text):
        step, hidden = self.decoder.step(hidden.unsqueeze(0), outputs.unsqueeze(0))
        scores = step.squeeze(1)
        words = step.split(" ")
        ids = self.tokenizer.encode(text)
        return scores, hidden, ids
'''


def test_what_a_kept_object_returns_for_the_models_tensors_is_on_the_models_device():
    state = function_state(analyse(KEPT_OBJECT_STEPS), "forward")
    # a submodule or a helper: handed the model's tensors, what it returns is where they are,
    # though not known to be a tensor
    assert state["step"].kind == Kind.UNKNOWN and place(state["step"]) == "follows"
    assert place(state["hidden"]) == "follows"
    # a tensor method keeps the placed object where it is; a method str has too says nothing
    assert place(state["scores"]) == "follows"
    assert state["words"].device is None
    # handed no tensor of the model's: nothing is known
    assert state["ids"].device is None


CARRIED_ATTRIBUTES = '''
import torch

class Ascent:
    def __init__(self, model):
        self.model = model
        self.gradients = None
        self.seen = None

    def reset(self, x):
        self.gradients = torch.ones(3)
        return self._step(x)

    def optimize(self, image):
        image = image.to("cuda")
        self.gradients = torch.zeros(image.shape)
        self.seen = 0
        return self._step(image)

    def _step(self, x):
        self.model(x)
        return x + self.gradients
'''


def test_a_method_starts_from_the_attributes_its_callers_on_the_same_object_set():
    state = function_state(analyse(CARRIED_ATTRIBUTES), "_step")
    # other methods write it, but every call of `_step` comes after its caller set it
    assert state["self.gradients"].kind == Kind.TENSOR and place(state["self.gradients"]) == "cpu"
    # set by only one of the two callers: unknown
    assert state["self.seen"].kind == Kind.UNKNOWN


ATTRIBUTES_SET_OUTSIDE_INIT = '''
import torch

class Scheduler:
    def __init__(self, steps):
        self.steps = steps
        self.betas = torch.linspace(0.1, 0.2, steps)
        self.scale = torch.ones(steps)

    def set_timesteps(self, n, device):
        sigmas = torch.linspace(1.0, 0.0, n)
        self.sigmas = sigmas
        self.timesteps = torch.arange(n).to(device)
        self.sigmas = self.sigmas.to("cpu")
        self.mixed = torch.zeros(n)
        self.betas = torch.linspace(0.1, 0.2, n)
        self.scale = self.scale.to("cpu")

    def reset(self, device):
        self.mixed = torch.zeros(3, device=device)
        self.sigmas = torch.ones(3)
        self.scaled = self.sigmas * 2

    def step(self, sample):
        sigma = self.sigmas[0]
        return sample * sigma
'''


def test_an_attribute_set_outside_init_is_what_the_methods_that_set_it_agree_on():
    analyzer = analyse(ATTRIBUTES_SET_OUTSIDE_INIT)
    state = function_state(analyzer, "step")
    # set only by `set_timesteps` and `reset`, on the host by both: the other methods see a host tensor
    assert state["self.sigmas"].kind == Kind.TENSOR and place(state["self.sigmas"]) == "cpu"
    # set in `__init__` and moved in `set_timesteps`: on the host either way
    assert state["self.betas"].kind == Kind.TENSOR and place(state["self.betas"]) == "cpu"
    # a writer that moves what it read reads what the other methods stored (`__init__`'s host
    # tensor) and moves it to the host again: on the host either way
    assert state["self.scale"].kind == Kind.TENSOR and place(state["self.scale"]) == "cpu"
    # the host in one method, a device in another: unknown
    assert state.get("self.mixed", UNKNOWN).kind == Kind.UNKNOWN
    # moved to the device `set_timesteps` was handed: a name of that method's scope, but the same tensor
    assert state["self.timesteps"].kind == Kind.TENSOR and place(state["self.timesteps"]) == "follows"


def test_an_attribute_set_outside_init_is_unknown_before_its_writer_is_analysed():
    # the reader comes first and nothing calls either: `step` is analysed before `set_timesteps`
    code = ATTRIBUTES_SET_OUTSIDE_INIT.replace("    def step(self, sample):", "    def late(self, sample):")
    code = code.replace("class Scheduler:\n", "class Scheduler:\n    def step(self, sample):\n        return sample * self.sigmas[0]\n\n")
    state = function_state(analyse(code), "step")
    assert state.get("self.sigmas", UNKNOWN).kind == Kind.UNKNOWN


INIT_HELPERS = '''
import torch

class Trainer:
    def report(self):
        return self.codes, self.table, self.shared, self.steps

    def __init__(self, n, device):
        self.n = n
        self.shared = torch.zeros(n)
        self._eval_noise()
        self.steps = self._schedule(device)
        self.reset()

    def _eval_noise(self):
        self.codes = torch.ones(self.n).cuda()
        self._tables()

    def _tables(self):
        if self.n > 3:
            self.table = torch.arange(self.n)
            return
        self.table = torch.zeros(self.n)

    def _schedule(self, device):
        self.timesteps = torch.arange(self.n).to(device)
        return self.timesteps

    def reset(self):
        self.shared = torch.ones(3).cuda()
'''


def test_attributes_a_method_called_from_init_sets_are_inits():
    analyzer = analyse(INIT_HELPERS)
    init = function_state(analyzer, "__init__")
    # `_eval_noise` has no return at its end: it runs all the same
    assert init["self.codes"].kind == Kind.TENSOR and place(init["self.codes"]) == "accel"
    # set by a helper of a helper, on both of its paths (one ends in a return): the host either way
    assert init["self.table"].kind == Kind.TENSOR and place(init["self.table"]) == "cpu"
    # a helper that returns: its result and what it stored, on the device it was handed
    assert init["self.steps"].kind == Kind.TENSOR and init["self.timesteps"].kind == Kind.TENSOR
    assert place(init["self.timesteps"]) == "follows" and init["self.timesteps"].device.label == "device"
    # `report` comes first in the file and nothing calls it, yet sees what the helpers set
    report = function_state(analyzer, "report")
    assert report["self.codes"].kind == Kind.TENSOR and place(report["self.codes"]) == "accel"
    # `reset` runs last in `__init__`: the tensor it stored replaces the one `__init__` made
    assert report["self.shared"].kind == Kind.TENSOR and place(report["self.shared"]) == "accel"


def test_only_methods_no_other_code_calls_run_as_part_of_init():
    assert analyse(INIT_HELPERS).file_classes()[0].init_only_helpers == frozenset({"_eval_noise", "_schedule", "reset"})
    # called again from elsewhere (or only by another helper): ordinary methods, whose writes
    # the other methods see where all writers agree
    analyzer = analyse(INIT_HELPERS + "\ndef again(trainer):\n    trainer.reset()\n    hook = trainer._eval_noise\n")
    assert analyzer.file_classes()[0].init_only_helpers == frozenset({"_schedule"})
    # a module's method run only by its `__init__` builds the module, like `__init__`
    module = analyse(
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._build()\n    def _build(self):\n        self.t = torch.ones(3)\n    def forward(self, x):\n"
        "        self._build()\n        return x\n    def _other(self):\n        pass\n"
    )
    build = next(function for function in module.function_states if function.name.value == "_build")
    assert not module.constructs_module(build)  # `forward` calls it too
    module = analyse(
        "import torch\nfrom torch import nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._build()\n    def _build(self):\n        self.t = torch.ones(3)\n    def forward(self, x):\n        return x\n"
    )
    build = next(function for function in module.function_states if function.name.value == "_build")
    assert module.constructs_module(build) and module.runs_in_init(build)


def test_a_collate_function_of_the_file_makes_the_loaders_batches():
    analyzer = analyse(
        "import torch\nfrom torch.utils.data import DataLoader\n"
        "def collate(items):\n    images = torch.stack([image for image, _ in items])\n"
        "    boxes = [torch.as_tensor(box) for _, box in items]\n    return images, boxes\n"
        "def stacked(items):\n    return torch.stack([image for image, _ in items])\n"
        "listed = DataLoader(dataset, batch_size=4, collate_fn=collate)\n"
        "for images, boxes in listed:\n    pass\n"
        "for batch in DataLoader(dataset, batch_size=4, collate_fn=stacked):\n    pass\n"
        "def padded(items):\n    return torch.tensor([item + [0] * (8 - len(item)) for item in items])\n"
        "for ids in DataLoader(dataset, batch_size=4, collate_fn=padded):\n    pass\n"
        "for default in DataLoader(dataset, batch_size=4):\n    pass\n"
    )
    state = analyzer.module_state
    # the batch is the tuple the collate function returns: a stack of the images, and a list
    assert state["images"].kind != Kind.CONTAINER
    assert state["boxes"].kind == Kind.CONTAINER
    # a stack of items the analysis does not know says nothing new
    assert state["batch"].kind == Kind.BATCH and state["batch"].role is None
    # a tensor built on the host from the drawn items is each batch: input data drawn from the loader, not a
    # factory's tensor that a helper hands back (DL203's where it reaches a model unmoved)
    ids = state["ids"]
    assert ids.kind == Kind.TENSOR and place(ids) == "cpu"
    assert ids.origin.from_data and analyzer.module.code_for_node(ids.origin.node).startswith("DataLoader(")
    assert analyzer.device_less_factory(ids) is None
    # default collation says nothing new
    assert state["default"].kind == Kind.BATCH


REPLICATED_HEAD = '''
import torch
from torch import nn

class Head(nn.Module):
    def __init__(self, gpu_ids, device):
        super().__init__()
        self.gpu_ids = gpu_ids
        self.device = device
        self.fc = nn.Linear(8, 4)

    def forward(self, x, labels):
        logits = self.fc(x)
        named = torch.zeros_like(logits).cuda(self.gpu_ids[0])
        ordinal = torch.zeros_like(logits).to("cuda:1")
        current = torch.zeros_like(logits).cuda()
        taken = torch.zeros_like(logits).to(x.device)
        stored = torch.zeros_like(logits).to(self.device)
        return logits

class Net(nn.Module):
    def __init__(self, gpu_ids, device):
        super().__init__()
        self.head = Head(gpu_ids, device)

    def forward(self, x, labels):
        return self.head(x, labels)

GPUS = [0, 1]
net = nn.DataParallel(Net(GPUS, "cuda"), device_ids=GPUS)
'''


def test_a_device_a_replicated_submodule_names_is_one_gpu_for_every_replica():
    state = function_state(analyse(REPLICATED_HEAD), "forward")
    logits = state["logits"]  # the replica's own weights made it
    assert logits.device is not None and logits.device.is_symbolic
    for name in ("named", "ordinal"):
        assert state[name].device.one_for_all_replicas is not None, name
        assert state[name].device.conflicts_with(logits.device) and logits.device.conflicts_with(state[name].device), name
    # the current device is each replica's own; so is a tensor's; an unknown setting may be "cuda"
    for name in ("current", "taken", "stored"):
        assert state[name].device is not None and state[name].device.one_for_all_replicas is None, name
        assert not state[name].device.conflicts_with(logits.device), name


def test_a_named_device_is_the_replicas_own_without_several_device_ids():
    for wrapping in ('nn.DataParallel(Net(GPUS, "cuda"), device_ids=[0])', 'Net(GPUS, "cuda")'):
        code = REPLICATED_HEAD.replace('nn.DataParallel(Net(GPUS, "cuda"), device_ids=GPUS)', wrapping)
        state = function_state(analyse(code), "forward")
        assert state["named"].device.one_for_all_replicas is None
        assert not state["named"].device.conflicts_with(state["logits"].device)


def test_a_transformers_tokenizer_gives_host_tensors_only_for_return_tensors_pt():
    analyzer = analyse(
        "import torch\nfrom transformers import AutoTokenizer, BertTokenizerFast, AutoModel\n"
        "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "fast = BertTokenizerFast('vocab.txt')\n"
        "batch = tokenizer(texts, return_tensors='pt', padding=True)\n"
        "ids = fast.encode(text, return_tensors='pt')\n"
        "pairs = tokenizer.batch_encode_plus(texts, return_tensors='pt')\n"
        "entry = batch['input_ids']\nattribute = batch.attention_mask\nmember = batch.encodings\n"
        "other = tokenizer(texts, return_tensors='pt')\nmoved = other.to('cuda')\nmoved_entry = moved.input_ids\n"
        "in_place = tokenizer(texts, return_tensors='pt')\nin_place.to('cuda')\n"
        "listed = tokenizer(texts)\nnumpy_ids = tokenizer.encode(text, return_tensors='np')\n"
        "decoded = tokenizer.decode(ids[0])\n"
        "model = AutoModel.from_pretrained('bert-base-uncased')\n"
    )
    state = analyzer.module_state
    assert state["tokenizer"].role is Role.TOKENIZER and state["fast"].role is Role.TOKENIZER
    # a model loaded by the same package is no tokenizer
    assert state["model"].kind == Kind.MODULE and state["model"].role is not Role.TOKENIZER
    for name in ("batch", "pairs"):
        assert state[name].kind == Kind.BATCH and state[name].role is Role.TOKENIZED_BATCH, name
    for name in ("batch", "ids", "pairs", "entry", "attribute"):
        assert place(state[name]) == "cpu", name
        assert state[name].origin.from_data and state[name].origin.tokenized, name
    assert state["ids"].kind == Kind.TENSOR and state["attribute"].kind == Kind.TENSOR
    # a BatchEncoding's `.to` returns the batch moved, still a BatchEncoding
    assert state["moved"].role is Role.TOKENIZED_BATCH and place(state["moved"]) == "accel"
    assert place(state["moved_entry"]) == "accel"
    # ... and moves it in place too: it replaces its entries with moved ones and returns itself
    assert place(state["other"]) == "accel" and place(state["in_place"]) == "accel"
    # lists without return_tensors="pt", numpy with "np", text from decode, non-tensor members
    for name in ("listed", "numpy_ids", "decoded", "member"):
        assert state[name].kind not in (Kind.TENSOR, Kind.BATCH), name


def test_generate_runs_the_model_on_its_inputs():
    module = cst.parse_module(
        "import torch\nfrom transformers import AutoModelForCausalLM\n"
        "lm = AutoModelForCausalLM.from_pretrained('gpt2').cuda()\n"
        "out = lm.generate(torch.ones(1, 4, dtype=torch.long), max_length=8)\n"
    )
    recorder = _Recorder()
    FlowAnalyzer(module, recorder, module.code_for_node).run()
    runs = [event for event in recorder.calls if event.runs_module is not None]
    assert len(runs) == 1
    assert runs[0].callee.kind == Kind.MODULE and place(runs[0].callee) == "accel"
    assert [place(value) for _, value in runs[0].args] == ["cpu", "unknown"]


def test_module_constructions_remember_their_arguments_and_moves():
    """What a call hands to a module class's ``__init__``, and whether the object it builds
    is moved or kept as a model's submodule (DL103 reads this for `self.x = x`)."""
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "class Append(nn.Module):\n    def __init__(self, feats, bounds=None):\n        super().__init__()\n"
        "        self.feats = feats\n    def forward(self, x):\n        return torch.cat([x, self.feats], -1)\n"
        "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.append = Append(torch.ones(2, 2))\n"
        "def main(device):\n    kept = Append(torch.zeros(5, 2))\n    moved = Append(torch.rand(5, 2), bounds=None)\n"
        "    moved.to(device)\n    dtype_only = Append(torch.rand(5, 2)).to(torch.float64)\n"
    )
    built = {analyzer.module.code_for_node(node): construction for node, construction in analyzer.facts.module_constructions.items()}
    assert set(built) == {
        "Append(torch.ones(2, 2))",
        "Append(torch.zeros(5, 2))",
        "Append(torch.rand(5, 2), bounds=None)",
        "Append(torch.rand(5, 2))",
    }
    moved = built["Append(torch.rand(5, 2), bounds=None)"]
    assert moved.moved_by is not None and analyzer.module.code_for_node(moved.moved_by) == "moved.to(device)"
    assert moved.bound["feats"].kind == Kind.TENSOR and moved.bound["feats"].device.is_cpu
    assert set(moved.bound) == {"feats", "bounds"}
    assert built["Append(torch.zeros(5, 2))"].moved_by is None
    assert built["Append(torch.rand(5, 2))"].moved_by is None  # a dtype, not a device
    submodule = built["Append(torch.ones(2, 2))"]
    assert submodule.moved_by is None and submodule.submodule_of is not None and submodule.submodule_of.name == "Model"
    assert built["Append(torch.zeros(5, 2))"].submodule_of is None



def test_a_move_of_a_container_module_moves_the_constructions_it_was_built_from():
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "class AddBias(nn.Module):\n    def __init__(self, bias):\n        super().__init__()\n        self.bias = bias\n"
        "    def forward(self, x):\n        return x + self.bias\n"
        "def main(device):\n    net = nn.Sequential(nn.Linear(4, 4), AddBias(torch.zeros(4)))\n    net = net.to(device)\n"
        "    kept = nn.ModuleList([AddBias(torch.ones(4))])\n"
    )
    built = {analyzer.module.code_for_node(node): construction for node, construction in analyzer.facts.module_constructions.items()}
    assert analyzer.module.code_for_node(built["AddBias(torch.zeros(4))"].moved_by) == "net.to(device)"
    assert built["AddBias(torch.ones(4))"].moved_by is None


def test_a_parameter_converted_in_place_is_told_from_one_rebound_otherwise():
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "class Norm(nn.Module):\n    def __init__(self, mean, std, scale, shift):\n        super().__init__()\n"
        "        if isinstance(mean, (int, float)):\n            mean = torch.tensor([mean])\n"
        "        if isinstance(mean, (list, tuple)):\n            mean = torch.tensor(mean)[None]\n"
        "        std = torch.as_tensor(std, device='cuda')\n        scale = scale * 2\n"
        "        self.mean, self.std, self.scale, self.shift = mean, std, scale, shift\n"
    )
    init = next(node for node in analyzer.function_states if node.name.value == "__init__")
    converted = analyzer.parameter_converted_in_place(init, cst.parse_expression("mean"))
    assert converted is not None and converted[0] == "mean" and len(converted[1]) == 2
    assert analyzer.parameter_converted_in_place(init, cst.parse_expression("std")) is None  # made on a device
    assert analyzer.parameter_converted_in_place(init, cst.parse_expression("scale")) is None  # re-bound to something else
    assert analyzer.parameter_converted_in_place(init, cst.parse_expression("shift")) is None  # never re-bound


def test_module_constructions_remember_the_own_methods_called_before_the_move():
    """``tagger.set_prior(counts)`` before ``tagger.to(device)``: a step of the build, with what
    it binds (DL103 reads this); a call after the move, or one inside the class, is not."""
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "class Tagger(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 3)\n"
        "    def set_prior(self, counts):\n        self.prior = torch.tensor(counts)\n"
        "    def reset(self):\n        self.set_prior([1, 1, 1])\n"
        "    def forward(self, x):\n        return self.fc(x) + self.prior\n"
        "def main(device):\n    tagger = Tagger()\n    tagger.set_prior([5, 3, 2])\n    tagger.to(device)\n    tagger.reset()\n"
    )
    (built,) = analyzer.facts.module_constructions.values()
    assert analyzer.module.code_for_node(built.moved_by) == "tagger.to(device)"
    assert [(analyzer.module.code_for_node(call), method.name.value) for call, method, _ in built.set_up_by] == [
        ("tagger.set_prior([5, 3, 2])", "set_prior")
    ]
    bound = built.set_up_by[0][2]
    assert bound is not None and bound["counts"].kind == Kind.CONTAINER

def test_local_rank_from_the_launcher_option_reaches_the_device_built_from_it():
    """The ``--local_rank`` option (whose default reads ``LOCAL_RANK``) is the process's local
    rank; a device string and ``torch.device`` built from it carry the mark, also after the
    branch that picks the CPU on a machine without a GPU."""
    analyzer = analyse(
        "import argparse, os\nimport torch\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))\n"
        "parser.add_argument('--lr', type=float, default=0.1)\n"
        "def train():\n    args = parser.parse_args()\n    rank = args.local_rank\n    lr = args.lr\n"
        "    if torch.cuda.is_available():\n        device = torch.device('cuda:{}'.format(args.local_rank))\n"
        "    else:\n        device = torch.device('cpu')\n"
        "    other = torch.device('cuda', int(os.environ['LOCAL_RANK']))\n"
    )
    state = function_state(analyzer, "train")
    assert state["rank"].role is Role.LOCAL_RANK
    assert state["lr"].role is None
    assert state["device"].kind == Kind.DEVICE and state["device"].role is Role.LOCAL_RANK
    assert state["device"].device is not None and state["device"].device.is_accel
    assert state["other"].role is Role.LOCAL_RANK


def test_an_option_without_a_rank_is_not_a_rank():
    analyzer = analyse(
        "import argparse\nimport torch\nparser = argparse.ArgumentParser()\nparser.add_argument('--gpu', type=int, default=0)\n"
        "def train():\n    args = parser.parse_args()\n    gpu = args.gpu\n    device = torch.device('cuda:{}'.format(args.gpu))\n"
    )
    state = function_state(analyzer, "train")
    assert state["gpu"].role is None
    assert state["device"].role is None


def test_function_form_of_an_elementwise_method_keeps_the_operand_dimensions():
    # efficientnet's drop_connect: `torch.floor(keep + torch.rand([n, 1, 1, 1]))` is a mask with
    # dimensions, so multiplying a GPU activation by it fails; a reduction is 0-dim-or-unknown
    analyzer = analyse(
        "import torch\n"
        "def mask(n, keep):\n"
        "    noise = keep + torch.rand([n, 1, 1, 1])\n"
        "    floored = torch.floor(noise)\n"
        "    total = torch.sum(noise)\n"
        "    return floored, total\n"
        "mask(4, 0.5)\n"
    )
    state = function_state(analyzer, "mask")
    assert place(state["floored"]) == "cpu" and state["floored"].scalar is False
    assert state["total"].scalar is not False


def test_arguments_after_a_spread_bind_no_known_parameter():
    from devicelint.analysis.helpers import argument_parameters

    function = cst.parse_module("def f(a, b, c=None, *, d=None):\n    pass\n").body[0]
    call = cst.parse_expression("f(*xs, y, d=z)")
    args = tuple((arg, UNKNOWN) for arg in call.args)
    assert argument_parameters(function, args, skip_first=False) == [None, None, "d"]
    call = cst.parse_expression("f(x, y)")
    args = tuple((arg, UNKNOWN) for arg in call.args)
    assert argument_parameters(function, args, skip_first=False) == ["a", "b"]


def test_first_parameter_of_a_module_is_where_the_module_is():
    # mmseg's inference_segmentor: the input is moved to the device of the model's parameters
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "def infer(model, img):\n"
        "    device = next(model.parameters()).device\n"
        "    return model(img.to(device))\n"
        "net = nn.Linear(4, 2)\nnet.to('cpu')\ninfer(net, torch.rand(1, 4))\n"
    )
    state = function_state(analyzer, "infer")
    assert state["device"].kind == Kind.DEVICE and place(state["device"]) == "cpu"


def test_allennlp_archive_model_and_iterator_batches():
    """load_archive puts the archive's model on its cuda_device (the CPU without one); an
    AllenNLP iterator's batches are host dicts unless its call is given a cuda_device."""
    analyzer = analyse(
        "from allennlp.data.iterators import BucketIterator\n"
        "from allennlp.models.archival import load_archive\n"
        "def main(args, instances):\n"
        "    placed = load_archive(args.archive, args.cuda_device).model\n"
        "    kept = load_archive(args.archive).model\n"
        "    negative = load_archive(args.archive, cuda_device=-1).model\n"
        "    iterator = BucketIterator(batch_size=8)\n"
        "    for batch in iterator(instances, num_epochs=1):\n"
        "        pass\n"
        "    for moved in iterator(instances, num_epochs=1, cuda_device=args.cuda_device):\n"
        "        pass\n"
    )
    state = function_state(analyzer, "main")
    assert state["placed"].kind == Kind.MODULE and place(state["placed"]) == "follows"
    assert place(state["kept"]) == "cpu" and place(state["negative"]) == "cpu"
    assert state["batch"].kind == Kind.BATCH and place(state["batch"]) == "cpu"
    assert place(state["moved"]) == "unknown"


def test_stacking_tensors_gives_one_with_a_dimension():
    # pyg's negative sampling: `torch.stack([picked // n, picked % n])` of a from_numpy tensor
    # is a 2-row CPU tensor, not a possible 0-dim scalar
    analyzer = analyse(
        "import numpy as np\nimport torch\n"
        "def sample(n):\n"
        "    picked = torch.from_numpy(np.arange(n))\n"
        "    pairs = torch.stack([picked // n, picked % n], dim=0)\n"
        "    return pairs\n"
        "sample(4)\n"
    )
    state = function_state(analyzer, "sample")
    assert state["picked"].scalar is None
    assert place(state["pairs"]) == "cpu" and state["pairs"].scalar is False


def test_state_dict_of_a_moved_model_holds_its_tensors_under_names():
    # fastllm's exporter: `weights = model.state_dict()`, then `for key in weights:` gives the
    # names, and `weights[key]` the model's own (GPU) tensors
    analyzer = analyse(
        "import torch\n"
        "from transformers import AutoModelForCausalLM\n"
        "def export(model):\n"
        "    weights = model.state_dict()\n"
        "    for key in weights:\n"
        "        name = key\n"
        "        weight = weights[key]\n"
        "    for key2, tensor in weights.items():\n"
        "        pair = (key2, tensor)\n"
        "    for value in weights.values():\n"
        "        kept = value\n"
        "model = AutoModelForCausalLM.from_pretrained('gpt2').cuda()\n"
        "export(model)\n"
    )
    state = function_state(analyzer, "export")
    assert state["name"].kind == Kind.STR
    assert state["weight"].kind == Kind.TENSOR and place(state["weight"]) == "accel"
    assert state["key2"].kind == Kind.STR and state["tensor"].kind == Kind.TENSOR and place(state["tensor"]) == "accel"
    assert state["kept"].kind == Kind.TENSOR and place(state["kept"]) == "accel"


def test_an_attribute_reset_to_zero_and_accumulating_a_tensor_holds_that_tensor():
    # undreamt's trainer: `self.loss = 0` in reset_stats(), `self.loss += loss.data[0]` in step():
    # after a step the running total is the GPU tensor; with `.item()` it stays a number
    code = (
        "import torch\n"
        "class Trainer:\n"
        "    def __init__(self, device):\n"
        "        self.device = device\n"
        "        self.reset()\n"
        "    def reset(self):\n"
        "        self.loss = 0\n"
        "        self.count = 0\n"
        "    def step(self):\n"
        "        loss = torch.randn(4, device=self.device).sum()\n"
        "        self.loss += loss{item}\n"
        "        self.count += 1\n"
        "    def report(self):\n"
        "        total = self.loss\n"
        "        count = self.count\n"
        "trainer = Trainer(torch.device('cuda'))\n"
        "trainer.step()\n"
        "trainer.report()\n"
    )
    state = function_state(analyse(code.format(item="")), "report")
    assert state["total"].kind == Kind.TENSOR and place(state["total"]) == "accel"
    assert state["count"].kind != Kind.TENSOR
    state = function_state(analyse(code.format(item=".item()")), "report")
    assert state["total"].kind != Kind.TENSOR


def test_a_dict_of_metrics_remembers_the_gpu_tensor_among_its_numbers():
    # SO-Net's errors: `OrderedDict([("loss", loss.item()), ("acc", acc)])` joins a float with a
    # 0-dim GPU tensor; the dict's values, picked one by one into a row, still may hold it, and
    # the entry that put it there is known
    analyzer = analyse(
        "from collections import OrderedDict\n"
        "import torch\n"
        "def errors(loss):\n"
        "    acc = torch.ones(3, device='cuda').mean()\n"
        "    pairs = OrderedDict([('loss', loss.item()), ('acc', acc)])\n"
        "    display = {'loss': loss.item(), 'acc': acc}\n"
        "    keywords = dict(loss=loss.item(), acc=acc)\n"
        "    numbers = {'loss': loss.item(), 'acc': acc.item()}\n"
        "    row = [pairs[k] for k in ('loss', 'acc')]\n"
        "errors(torch.ones(1))\n"
    )
    state = function_state(analyzer, "errors")
    for name in ("pairs", "display", "keywords", "row"):
        info = state[name].info
        assert info.some is not None and info.some.kind == Kind.TENSOR and place(info.some) == "accel", name
        assert isinstance(info.put_by, cst.Name) and info.put_by.value == "acc", name
    assert state["numbers"].info.some is None and state["numbers"].info.put_by is None


def test_a_parameter_every_call_leaves_to_its_default_has_it():
    # robustness-gym's Model: `device=None`, then the run's GPU choice on the None arm
    analyzer = analyse(
        "import torch\n"
        "def place(x, device=None, scale=2):\n"
        "    device = device if device is not None else ('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    return x.to(device) * scale\n"
        "def fallback(x, device=None):\n"
        "    device = device or ('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    return x.to(device)\n"
        "def given(x, device=None):\n"
        "    return x.to(device)\n"
        "def named(x, device='cpu'):\n    return x.to(device)\n"
        "place(torch.zeros(3))\nfallback(torch.zeros(3))\ngiven(torch.zeros(3), torch.device('cpu'))\nnamed(torch.zeros(3))\n"
    )
    placed = function_state(analyzer, "place")
    assert placed["device"].kind == Kind.DEVICE and placed["device"].device.is_accel
    assert placed["scale"].kind == Kind.NUMBER and placed["scale"].literal == 2
    assert function_state(analyzer, "fallback")["device"].kind == Kind.DEVICE
    # a call that gives it: not the default
    assert place(function_state(analyzer, "given")["x"]) == "cpu"
    # a string default may name a device other callers choose otherwise (diffusers'
    # DiffusionPolicy(device="cpu")): not taken for the program's device
    assert function_state(analyzer, "named")["device"].kind != Kind.STR


def test_what_a_method_called_from_outside_leaves_on_the_object_is_what_its_next_method_starts_from():
    code = '''
import torch
from torch import nn

class Segmenter:
    def __init__(self, device):
        self.net = nn.Conv1d(3, 5, 1).to(device)

    def optimize(self, points):
        self.score = self.net(points.to(self.net.weight.device))

    def to_host(self):
        self.score = self.score.cpu()

    def errors(self):
        accuracy = self.score.mean()
        return accuracy

class Runner:
    def __init__(self, model):
        self.model = model

    def run(self):
        self.model.to_host()
        self.model.errors()

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Segmenter(device)
model.optimize(torch.randn(4, 3, 32))
model.errors()
after = model.score
'''
    analyzer = analyse(code)
    # the methods of the class disagree on `score`: only the call order says where it is
    assert place(analyzer.module_state["after"]) == "accel"
    assert place(function_state(analyzer, "errors")["accuracy"]) == "accel"


def test_a_method_called_before_the_attribute_is_left_on_the_object_does_not_take_it():
    code = '''
import torch
from torch import nn

class Segmenter:
    def __init__(self, device):
        self.net = nn.Conv1d(3, 5, 1).to(device)

    def optimize(self, points):
        self.score = self.net(points.to(self.net.weight.device))

    def to_host(self):
        self.score = self.score.cpu()

    def errors(self):
        accuracy = self.score.mean()
        return accuracy

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Segmenter(device)
model.errors()
model.optimize(torch.randn(4, 3, 32))
model.errors()
'''
    # the first call comes before any method set `score`: where it is in `errors` is not known
    assert function_state(analyse(code), "errors")["accuracy"].device is None


def test_an_attribute_left_on_another_object_follows_that_objects_device_not_the_callers():
    code = '''
import torch
from torch import nn

class Wrapper:
    def __init__(self, opt):
        self.device = opt.device

    def set_input(self, data):
        self.real_A = data.to(self.device)

class Trainer:
    def __init__(self, opt):
        self.device = opt.device
        self.model = Wrapper(opt)

    def step(self, data):
        self.model.set_input(data)
        batch = self.model.real_A
'''
    batch = function_state(analyse(code), "step")["batch"]
    # the wrapper's own `self.device`, not the trainer's
    assert batch.device is not None and batch.device.label == "self.model.device"


def test_a_function_of_the_file_kept_on_an_object_is_called_with_the_callers_arguments():
    # setfit's Trainer: the metric given to its constructor is called as `self.metric(...)`
    analyzer = analyse(
        "import torch\nfrom torch import nn\n"
        "class Trainer:\n    def __init__(self, model, metric):\n"
        "        self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "        self.model = model.to(self.device)\n        self.metric = metric\n"
        "    def evaluate(self, x, y):\n        y_pred = self.model(x.to(self.device))\n"
        "        return self.metric(y_pred, y)\n"
        "    def metric_of_class(self, a):\n        return a\n"
        "def accuracy(predictions, labels):\n    return predictions, labels\n"
        "trainer = Trainer(nn.Linear(4, 3), accuracy)\nprint(trainer.evaluate(torch.randn(2, 4), [0, 1]))\n"
    )
    metric = function_state(analyzer, "accuracy")
    assert metric["predictions"].kind == Kind.TENSOR and metric["predictions"].device.may_be_accelerator
    assert metric["labels"].kind == Kind.CONTAINER


def test_torch_cat_of_a_models_outputs_of_unknown_kind_is_a_tensor_where_they_are():
    # poptimizer: `mean, std = model(batch)` of a moved model of unknown class, collected and joined
    analyzer = analyse(
        "import torch\nfrom nets import WaveNet\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def evaluate(batches):\n    model = WaveNet().to(device)\n    means, variances = [], []\n"
        "    for batch in batches:\n        mean, std = model(batch)\n        means.append(mean)\n        variances.append(std ** 2)\n"
        "    joined = torch.cat(means)\n    spread = torch.cat(variances)\n    doubled = 2 * std\n    return joined, spread, doubled\n"
        "evaluate([torch.zeros(2, 3)])\n"
    )
    state = function_state(analyzer, "evaluate")
    assert state["joined"].kind == Kind.TENSOR and state["joined"].device.may_be_accelerator
    assert state["spread"].kind == Kind.TENSOR and state["spread"].device.may_be_accelerator
    # a number times the output: still where it was, still of unknown kind (it may be a float)
    assert state["doubled"].kind == Kind.UNKNOWN and state["doubled"].device.may_be_accelerator


def test_iterating_an_object_whose_iter_is_a_generator_gives_what_it_yields():
    analyzer = analyse(
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "class Loader:\n    def __init__(self):\n        self.batches = [{'x': torch.randn(4, 6)} for _ in range(3)]\n"
        "    def __iter__(self):\n        for batch in self.batches:\n"
        "            yield {key: value.to(device) for key, value in batch.items()}\n"
        "class Plain:\n    def __iter__(self):\n        return iter([torch.zeros(2)])\n"
        "def run():\n    for batch in Loader():\n        x = batch['x']\n    for item in Plain():\n        y = item\n    return x, y\n"
        "run()\n"
    )
    state = function_state(analyzer, "run")
    assert state["x"].kind == Kind.TENSOR and state["x"].device.may_be_accelerator
    assert state["y"].device is None  # not a generator: not followed


def test_iterating_a_dict_of_metrics_comes_to_the_gpu_tensor_among_its_numbers():
    # breaching's dump_metrics: `dict(**metrics, label_acc=acc)`, then `for key, val in metrics.items()`
    analyzer = analyse(
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "def run(x):\n    order = torch.argsort(x.to(device))\n    metrics = dict(mse=x.mean().item(), order=order)\n"
        "    merged = dict(**metrics, label_acc=0.5)\n    for key, val in merged.items():\n        pass\n"
        "    for item in merged.values():\n        pass\n    for name in merged:\n        pass\n    return val, item, name\n"
        "run(torch.randn(4))\n"
    )
    state = function_state(analyzer, "run")
    assert state["val"].kind == Kind.TENSOR and state["val"].device.may_be_accelerator
    assert state["item"].kind == Kind.TENSOR and state["item"].device.may_be_accelerator
    assert state["name"].kind != Kind.TENSOR  # iterating a dict gives its keys


def test_a_tensor_of_a_shape_and_its_slices_have_a_dimension():
    # onnx-pytorch's generated Shape nodes: `torch.tensor(x.shape)`, then `shape[0:1]`
    analyzer = analyse(
        "import torch\ndef run(x):\n    shape = torch.tensor(x.shape)\n    head = shape[0:1]\n"
        "    tail = torch.tensor(x.shape[2:])\n    sizes = torch.tensor(x.size())\n"
        "    first = torch.tensor(x.shape[0])\n    picked = shape[0]\n    return shape, head, tail, sizes, first, picked\n"
    )
    state = function_state(analyzer, "run")
    for name in ("shape", "head", "tail", "sizes"):
        assert state[name].kind == Kind.TENSOR and state[name].scalar is False, name
    assert state["first"].scalar is not False  # an int: 0-dim
    assert state["picked"].scalar is not False  # an integer index drops the dimension


def test_a_method_that_reads_what_it_stores_reads_first_what_the_other_methods_stored():
    # modyn's RHO-LOSS downsampler: `reset()` leaves a host tensor, `update()` concatenates to it
    analyzer = analyse(
        "import torch\nclass Meter:\n    def __init__(self):\n        self.scores = torch.tensor([])\n"
        "    def reset(self):\n        self.scores = torch.tensor([])\n"
        "    def update(self, x):\n        first = self.scores\n        self.scores = torch.cat([self.scores, x.cuda()])\n"
        "class Mixed:\n    def __init__(self):\n        self.scores = torch.tensor([])\n"
        "    def reset(self, device):\n        self.scores = torch.tensor([], device=device)\n"
        "    def update(self, x):\n        first = self.scores\n        self.scores = torch.cat([self.scores, x])\n"
    )
    methods = [node for node in analyzer.function_states if node.name.value == "update"]
    states = [analyzer.function_states[node] for node in methods]
    assert states[0]["first"].device is not None and states[0]["first"].device.is_cpu
    assert states[1]["first"].device is None  # __init__ and reset() disagree: unknown


def test_slices_and_none_keep_a_tensors_dimensions():
    code = (
        "import torch\n"
        "def normalize(n):\n"
        "    mean = torch.tensor([0.485, 0.456, 0.406], dtype=torch.float32)\n"
        "    column = mean[:, None, None]\n"
        "    window = mean[1:3]\n"
        "    rest = mean[..., :2]\n"
        "    first = mean[0]\n"
        "    picked = mean[n]\n"
        "    grown = torch.tensor(2.0)[None]\n"
        "    return column, window, rest, first, picked, grown\n"
    )
    state = function_state(analyse(code), "normalize")
    for name in ("column", "window", "rest", "grown"):
        assert state[name].kind == Kind.TENSOR and place(state[name]) == "cpu" and state[name].scalar is False, name
    # an integer (or an index of unknown kind) may drop the only dimension
    assert state["first"].scalar is None and state["picked"].scalar is None



def test_a_slice_beside_an_integer_index_keeps_a_dimension():
    # pytorch-topological's persistence pairs: `torch.as_tensor(gens)[:, 0]` is a column, a
    # vector; zeros_like of it is a host vector, which torch.stack refuses beside a GPU one
    code = (
        "import torch\n"
        "def columns(pairs, n):\n"
        "    column = pairs[:, 0]\n"
        "    row = pairs[n, :]\n"
        "    picked = pairs[..., 0]\n"
        "    return column, row, picked\n"
        "columns(torch.tensor([[0, 1, 2]]), 0)\n"
    )
    state = function_state(analyse(code), "columns")
    assert state["column"].scalar is False and state["row"].scalar is False
    assert state["picked"].scalar is None  # `...` may stand for no dimension at all


def test_flattening_and_indexing_by_a_tensor_with_a_dimension_keep_one():
    # a diffusion scheduler's per-sample factors: a 0-dim CPU tensor could meet GPU latents,
    # these cannot
    code = (
        "import torch\n"
        "def factors(steps, n):\n"
        "    table = torch.cumprod(torch.linspace(0.1, 0.9, 10), dim=0)\n"
        "    timesteps = torch.randint(0, 10, (4,))\n"
        "    picked = table[timesteps]\n"
        "    masked = table[table > 0.5]\n"
        "    flat = table[n].flatten()\n"
        "    raveled = torch.flatten(table[n])\n"
        "    by_number = table[n]\n"
        "    by_unknown = table[steps]\n"
        "    return picked, masked, flat, raveled, by_number, by_unknown\n"
    )
    state = function_state(analyse(code), "factors")
    for name in ("picked", "masked", "flat", "raveled"):
        assert state[name].kind == Kind.TENSOR and place(state[name]) == "cpu" and state[name].scalar is False, name
    # an integer, or an index of unknown shape, may drop the only dimension
    assert state["by_number"].scalar is None and state["by_unknown"].scalar is None


def test_a_conditional_expression_narrows_by_isinstance_as_an_if_does():
    code = (
        "import torch\n"
        "def as_tensor(v):\n"
        "    return v if isinstance(v, torch.Tensor) else torch.tensor(v)\n"
        "def kept(v):\n"
        "    return torch.tensor(v) if not torch.is_tensor(v) else v\n"
        "def normalizer(device):\n"
        "    mean = as_tensor([0.5, 1.0])\n"
        "    std = kept(torch.ones(2, device=device))\n"
        "    return mean, std\n"
    )
    state = function_state(analyse(code), "normalizer")
    # a list cannot take the tensor arm: `torch.tensor(v)` on the CPU
    assert state["mean"].kind == Kind.TENSOR and place(state["mean"]) == "cpu"
    # a tensor cannot take the other arm: the caller's, where the caller made it
    assert state["std"].kind == Kind.TENSOR and place(state["std"]) == "follows"


def test_a_base_class_init_is_built_from_what_super_init_hands_it():
    code = (
        "import torch\n"
        "class Normalizer:\n"
        "    def __init__(self, shift, scale, key=None):\n"
        "        self.shift, self.scale, self.key = shift, scale, key\n"
        "    def __call__(self, x):\n"
        "        shift = self.shift\n"
        "        key = self.key\n"
        "        return (x + shift) * self.scale\n"
        "class MeanStd(Normalizer):\n"
        "    def __init__(self, mean, std, **kwargs):\n"
        "        super().__init__(-torch.tensor(mean), 1.0 / torch.tensor(std), **kwargs)\n"
        "normalize = MeanStd([0.5, 1.0], [2.0, 3.0], key='pressure')\n"
        "normalize(torch.randn(4, 2))\n"
    )
    state = function_state(analyse(code), "__call__")
    assert state["shift"].kind == Kind.TENSOR and place(state["shift"]) == "cpu"
    # `**kwargs` may give `key`: not its default None
    assert state["key"].role is not Role.NONE_DEFAULT and state["key"].kind != Kind.NUMBER


def test_a_parameter_cast_to_a_float_type_as_a_torch_functions_operand_is_a_tensor():
    code = (
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
        "class Loss(nn.Module):\n"
        "    def terms(self, prediction, target, model):\n"
        "        classes = F.one_hot(torch.tensor([int(v) for v in target]), 3)\n"
        "        loss = F.cross_entropy(prediction.float(), classes.float())\n"
        "        model.half()\n"
        "        return loss\n"
    )
    state = function_state(analyse(code), "terms")
    # a module has `.float()` too, but no torch function takes one
    assert state["prediction"].kind == Kind.TENSOR and place(state["prediction"]) == "follows"
    # one_hot adds a dimension: never a 0-dim tensor that PyTorch lets meet a GPU one
    assert place(state["classes"]) == "cpu" and state["classes"].scalar is False
    # a cast elsewhere is no evidence
    assert state["model"].kind != Kind.TENSOR


def test_an_object_of_a_class_of_the_file_handed_to_a_function_keeps_its_class():
    # a hand-written batch iterator built in the main block and handed to `train`: the loop
    # there gets what its `__iter__` yields
    analyzer = analyse(
        "import torch\n"
        "class BucketIterator:\n    def __init__(self, examples, device):\n        self.examples, self.device = examples, device\n"
        "    def __iter__(self):\n        for tokens in self.examples:\n"
        "            lengths = torch.tensor([len(tokens)])\n            yield torch.tensor(tokens).to(self.device), lengths.to(self.device)\n"
        "def train(iterator):\n    for text, text_lengths in iterator:\n        seen = text_lengths\n    return seen\n"
        "if __name__ == '__main__':\n    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "    print(train(BucketIterator([[1, 2], [3]], device)))\n"
    )
    state = function_state(analyzer, "train")
    assert state["text_lengths"].kind == Kind.TENSOR and state["text_lengths"].device.may_be_accelerator


def test_a_device_none_default_the_call_leaves_out_moves_nothing():
    # `set_timesteps(n)` leaves `device=None`: `.to(device=device, dtype=...)` only casts, it
    # does not put the timesteps on an accelerator ordinal
    analyzer = analyse(
        "import numpy as np\nimport torch\n"
        "class Scheduler:\n    def set_timesteps(self, num_inference_steps, device=None):\n"
        "        timesteps = np.linspace(0, 1000, num_inference_steps)\n"
        "        self.timesteps = torch.from_numpy(timesteps).to(device=device, dtype=torch.int64)\n"
        "def test_timesteps():\n    scheduler = Scheduler()\n    scheduler.set_timesteps(num_inference_steps=5)\n"
        "    steps = scheduler.timesteps\n    return steps\n"
    )
    state = function_state(analyzer, "test_timesteps")
    assert state["steps"].device is None or not state["steps"].device.may_be_accelerator


def test_an_object_of_a_plain_class_carries_the_attributes_its_methods_see():
    code = '''
import torch

class PartitionBook:
    def __init__(self, table, rows):
        self.table = table
        self.rows = rows
        self.scale = torch.ones(3)

    def rescale(self, device):
        self.scale = self.scale.to(device)

class Sampler:
    def __init__(self, book):
        self.book = book

    def sample(self, device):
        table = self.book.table
        rows = self.book.rows.to(device)
        scale = self.book.scale
        missing = self.book.nothing_sets_this
        return table, rows, scale, missing

book = PartitionBook(torch.arange(12) % 2, torch.arange(12))
Sampler(book).sample("cuda")
'''
    state = function_state(analyse(code), "sample")
    assert state["table"].kind == Kind.TENSOR and place(state["table"]) == "cpu"  # the constructor's argument
    assert state["rows"].kind == Kind.TENSOR and place(state["rows"]) == "accel"
    # another method moves it: the class's methods cannot tell where it is, nor can its users
    assert place(state["scale"]) == "unknown"
    assert state["missing"] is UNKNOWN


def test_a_plain_class_with_its_own_to_method_runs_it():
    # a pipeline of the file (not a diffusers subclass) whose `to()` moves its model, keeps the
    # device and returns itself: `Pipeline(vae).to(device)` runs that method, so `pipe(...)`
    # draws on the device `to()` kept (diffusers LTX image-to-video, before randn_tensor)
    template = '''
import torch
import torch.nn as nn

class Pipeline:
    def __init__(self, vae):
        self.vae = vae
        self.device = torch.device("cpu")

    def to(self, device):
        self.device = torch.device(device)
        self.vae.to(self.device)
        return self

    def noise(self, shape, generator, device):
        return torch.randn(shape, generator=generator, device=device)

    def __call__(self, image, generator=None):
        return self.vae(image.to(self.device)) + self.noise((2, 4), generator, self.device)

device = "cuda" if torch.cuda.is_available() else "cpu"
pipe = Pipeline(nn.Linear(4, 4)).to(device)
print(pipe(torch.rand(2, 4), generator=GENERATOR))
'''
    flagged = {(f.code, f.line) for f in lint(template.replace("GENERATOR", "torch.Generator().manual_seed(42)"))}
    assert ("DL208", 16) in flagged
    quiet = {f.code for f in lint(template.replace("GENERATOR", "torch.Generator(device=device).manual_seed(42)"))}
    assert "DL208" not in quiet


def test_an_accumulator_of_a_loop_inside_another_loop_keeps_what_it_accumulates():
    # SANet's validation: the errors of every patch of every image summed into `mse`, set to 0
    # before the outer loop; the inner loop's first silent pass used to give up on it
    code = '''
import numpy as np
import torch

def validate(test_loader, model, device):
    mse = 0
    for img_list, target_list in test_loader:
        for img, target in zip(img_list, target_list):
            output = model(img.to(device))
            mse += (target.to(device).sum() - output.sum()) ** 2
    return np.sqrt(mse / len(test_loader))

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Linear(4, 1).to(device)
loader = [([torch.rand(2, 4)], [torch.rand(2, 1)])]
validate(loader, model, device)
'''
    state = function_state(analyse(code), "validate")
    assert state["mse"].kind == Kind.TENSOR and place(state["mse"]) == "accel"
    assert ("DL204", 11) in {(f.code, f.line) for f in lint(code)}


def test_a_call_of_a_parameterless_module_of_the_file_gives_what_its_forward_returns():
    # doctr's predictors: the pre-processor owns no parameters, and stacks the host pages it is
    # handed into batches; a module that owns some gives its outputs on its device as before
    code = '''
import torch
from torch import nn

class PreProcessor(nn.Module):
    def forward(self, pages):
        return torch.stack([torch.as_tensor(page).float() for page in pages])

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x):
        return torch.as_tensor(x) * self.weight

class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre_processor = PreProcessor()
        self.scale = Scale()
        self.head = nn.Linear(3, 2)

    def forward(self, pages):
        batch = self.pre_processor(pages)
        scaled = self.scale(pages)
        return self.head(batch), scaled

predictor = Predictor()
if torch.cuda.is_available():
    predictor = predictor.cuda()
print(predictor([torch.rand(3) for _ in range(4)]))
'''
    assert ("DL201", 27) in {(f.code, f.line) for f in lint(code)}  # `self.head(batch)`
    forward = next(
        state for node, state in analyse(code).function_states.items() if "self.pre_processor(pages)" in cst.Module([]).code_for_node(node)
    )
    assert place(forward["batch"]) == "cpu"
    assert place(forward["scaled"]) == "follows"  # a module with parameters: its outputs are where it is


def test_a_function_that_moves_a_module_it_is_handed_in_place_leaves_the_callers_module_there():
    # nn.Module.to/.cuda/.cpu move the module itself: a helper that moves the model it is handed,
    # a plain class whose `__init__` keeps `self.model = model.to(device)`, and a method that
    # moves the model an object handed to it keeps (pytext's load_best_model: `state.model.cpu()`)
    # leave the caller's model where they put it; one that hands it on to unseen code does not
    code = '''
import torch
from torch import nn

class Holder:
    def __init__(self, model):
        self.model = model

class Trainer:
    def __init__(self, model, device):
        self.model = model.to(device)

def place(model, device):
    model.to(device)

def offload(holder):
    holder.model.cpu()

def hand_on(model, device, runner):
    model.to(device)
    runner.compile(model)

def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    placed = nn.Linear(4, 2)
    place(placed, device)
    trained = nn.Linear(4, 2)
    trainer = Trainer(trained, device)
    holder = Holder(nn.Linear(4, 2).to(device))
    offload(holder)
    compiled = nn.Linear(4, 2)
    hand_on(compiled, device, None)
'''
    state = function_state(analyse(code), "main")
    assert state["placed"].kind == Kind.MODULE and place(state["placed"]) == "accel"
    assert place(state["trained"]) == "accel"
    assert state["holder.model"].device.is_cpu
    assert place(state["compiled"]) == "unknown"


def test_a_method_that_moves_its_own_module_leaves_the_receiver_there():
    # ChatTTS's DVAE.load_pretrained(device): `self.to(device)` in a method of the module's class
    # moves the object it is called on; a method that also hands `self` to unseen code does not
    # tell where it is
    code = '''
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def load_pretrained(self, device):
        self.to(device)

    def offload(self, hooks, device):
        self.to(device)
        hooks.register(self)

def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    placed = Net()
    placed.load_pretrained(device)
    hooked = Net()
    hooked.offload(None, device)
'''
    state = function_state(analyse(code), "main")
    assert state["placed"].kind == Kind.MODULE and place(state["placed"]) == "accel"
    assert place(state["hooked"]) == "unknown"


def test_a_dict_filled_by_stores_holds_what_was_stored():
    code = '''
import torch
masks = {}
for name in ["a", "b"]:
    masks[name] = torch.full((3,), 1, device="cuda")
for name in masks:
    entry = masks[name]
for key, value in masks.items():
    pair_value = value
handed = load()
handed["x"] = torch.zeros(3, device="cuda")
other = handed["y"]
'''
    state = analyse(code).module_state
    assert place(state["entry"]) == "accel"
    assert place(state["pair_value"]) == "accel"
    # a dict of unknown content (from a call) does not become known by one store
    assert state["other"].kind != Kind.TENSOR


def test_a_guard_that_leaves_narrows_what_follows():
    code = '''
import torch
def early_return(flag):
    acc = None
    if flag:
        acc = torch.zeros(3, device="cuda")
    if acc is None:
        return None
    return acc.numpy()

def loop_continue(batches):
    for batch in batches:
        acc = None
        for part in batch:
            acc = torch.zeros(3, device="cuda") if acc is None else acc + part
        if acc is None or len(batch) < 2:
            continue
        acc.numpy()
'''
    assert {("DL204", 9), ("DL204", 18)} <= {(f.code, f.line) for f in lint(code)}


def test_a_continue_path_still_reaches_the_next_iteration():
    code = '''
import torch
x = torch.zeros(3, device="cpu")
for step in range(3):
    if step == 0:
        x = x.cuda()
        continue
    seen = x
'''
    state = analyse(code).module_state
    # the first iteration moved `x` and skipped the rest of the body; later ones see it moved
    assert place(state["seen"]) == "accel"


def test_a_float_literal_starts_a_running_total():
    code = '''
import torch
loss = torch.zeros((), device="cuda")
total = 0.0
for step in range(3):
    total += 2.0 * loss
after = total
'''
    state = analyse(code).module_state
    # as `total = 0` does: after any iteration a tensor on the loss's device
    assert state["after"].kind == Kind.TENSOR and place(state["after"]) == "accel"


def test_a_dict_display_reads_back_each_constant_key():
    code = '''
import torch
from torch import nn
net = nn.Linear(3, 3)
config = {"net": net, "offload": True, "scale": torch.ones(3)}
picked = config["net"]
scale = config["scale"]
nested = {"loss": {"total": torch.zeros(3, device="cuda")}, "count": 1}
inner = nested["loss"]["total"]
'''
    state = analyse(code).module_state
    # the entry itself, not the join of all the values (a module, a flag and a tensor: unknown)
    assert state["picked"].kind == Kind.MODULE
    assert state["scale"].kind == Kind.TENSOR and place(state["scale"]) == "cpu"
    assert state["inner"].kind == Kind.TENSOR and place(state["inner"]) == "accel"


def test_a_parameter_or_a_number_stays_the_parameter_it_may_be():
    code = '''
import torch
from torch import nn
class Norm(nn.Module):
    def __init__(self, dim, bias=False):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else 0.0
    def forward(self, x):
        return x * self.scale + self.bias
'''
    # joined with the float the other arm gives, `self.bias` is still a Parameter: no plain attribute
    assert not [f for f in lint(code) if f.code == "DL103"]


def test_a_string_index_says_the_value_is_no_tensor():
    code = '''
import torch
from torch.utils.data import DataLoader
def run(dataset, device):
    for parts, target in DataLoader(dataset, batch_size=2):
        for key, value in parts.items():
            parts[key] = parts[key].to(device)
        patches = parts["patches"]
    return patches
'''
    state = function_state(analyse(code), "run")
    # `parts` was taken for a tensor (an unpacked batch); a tensor has no "patches" entry
    assert state["patches"].kind == Kind.UNKNOWN and state["patches"].device is None


def test_a_tensor_assigned_to_a_registered_buffer_name_stays_a_buffer_in_other_methods():
    # nn.Module.__setattr__ stores a tensor assigned to a registered buffer's name as that buffer
    # (a histogram observer updating its histogram in forward): in the class's other methods it
    # is still a buffer, on the model's device, so a host arange meeting it there is DL202's
    code = """
import torch
import torch.nn as nn


class Observer(nn.Module):
    def __init__(self, bins=64):
        super().__init__()
        self.bins = bins
        self.register_buffer("histogram", torch.zeros(bins))

    def forward(self, x):
        self.histogram = self.histogram + torch.histc(x, self.bins)
        return x

    def error(self):
        positions = torch.arange(self.bins)
        return (self.histogram * positions).sum()
"""
    state = function_state(analyse(code), "error")
    assert state["self.histogram"].kind == Kind.TENSOR and place(state["self.histogram"]) == "follows"
    assert [(finding.line, finding.code) for finding in lint(code)] == [(17, "DL202")]


def test_a_submodule_read_outside_the_class_is_where_its_module_is():
    # `model.obs` of `model = Parent().to("cuda")`: the submodule __init__ kept, moved with the
    # model, of its own class (so a method called on it at module level runs with its buffers there)
    code = """
import torch
import torch.nn as nn


class Observer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("histogram", torch.zeros(8))

    def error(self):
        return (self.histogram * torch.arange(8)).sum()


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.obs = Observer()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.obs(self.fc(x))


model = Parent().to("cuda")
observer = model.obs
print(model.obs.error())
"""
    state = analyse(code).module_state
    assert state["observer"].kind == Kind.MODULE and place(state["observer"]) == "accel"
    assert [(finding.line, finding.code) for finding in lint(code)] == [(12, "DL202")]


OWN_METHODS = '''
import torch
from torch import nn

class CRF(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.transitions = nn.Parameter(torch.randn(n, n))
        self.encoder = nn.Linear(n, n)

    def decode(self, emissions, mask):
        return (self.transitions + emissions) * mask

    def encode(self, x):
        return self.encoder(x.to(self.transitions.device))

    def rescale(self, x):
        return x * 2

    def state_dict(self):
        return {"transitions": self.transitions}

def run(device):
    crf = CRF(5)
    emissions = torch.randn(2, 5).to(device)
    mask = torch.ones(2, 5)
    crf.decode(emissions, mask)
    crf.encode(emissions)
    crf.rescale(emissions)
    crf.state_dict()
'''


def test_own_method_inputs_are_the_methods_that_compute_with_the_modules_weights():
    """A module's own method other than ``forward`` holds its inputs to the module's device
    where it reads the module's parameters or submodules; the inputs it moves itself may be
    anywhere; a method that never touches the weights, and nn.Module's own methods, are not
    such calls."""
    analyzer = analyse(OWN_METHODS)
    calls = {event.method: event for event in analyzer.sink.calls if event.method in ("decode", "encode", "rescale", "state_dict")}
    decode = analyzer.own_method_inputs(calls["decode"].receiver, "decode", calls["decode"].args)
    assert decode is not None
    assert decode[0].name.value == "decode" and decode[1] == ["emissions", "mask"] and decode[2] == [False, False]
    encode = analyzer.own_method_inputs(calls["encode"].receiver, "encode", calls["encode"].args)
    assert encode is not None and encode[2] == [True]
    assert analyzer.own_method_inputs(calls["rescale"].receiver, "rescale", calls["rescale"].args) is None
    assert analyzer.own_method_inputs(calls["state_dict"].receiver, "state_dict", calls["state_dict"].args) is None


def test_a_module_with_buffers_only_is_built_on_the_host_and_one_keeping_a_moved_module_is_not_one_place():
    # a module whose state is buffers (a running statistic) is made on the host like one with
    # parameters; a loss built around an actor already moved holds parts on two devices
    code = '''
import torch
from torch import nn

class Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("q", torch.tensor([0.05, 0.95]))

class Loss(nn.Module):
    def __init__(self, actor):
        super().__init__()
        self.actor = actor
        self.stats = Stats()

def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    stats = Stats()
    own = Loss(nn.Linear(4, 2))
    actor = nn.Linear(4, 2).to(device)
    mixed = Loss(actor)
'''
    state = function_state(analyse(code), "main")
    assert place(state["stats"]) == "cpu"
    assert place(state["own"]) == "cpu"
    assert place(state["mixed"]) == "unknown"


def test_fields_of_a_models_output_object_are_where_the_model_is():
    # transformers' ModelOutput: `.logits` one tensor, `.hidden_states` one per layer, `generate`'s
    # token ids (or `.sequences`); a field the analysis does not know (`past_key_values`, nested
    # caches) stays unknown
    code = '''
import torch
from transformers import AutoModel

def main(batch):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = AutoModel.from_pretrained("bert-base-uncased").to(device)
    outputs = model(**batch)
    logits = outputs.logits
    last = outputs.hidden_states[-1]
    cache = outputs.past_key_values
    ids = model.generate(**batch)
    sequences = model.generate(**batch, return_dict_in_generate=True).sequences
    embedding = model.get_input_embeddings()
'''
    state = function_state(analyse(code), "main")
    assert place(state["ids"]) == "accel" and place(state["sequences"]) == "accel"
    assert state["embedding"].kind == Kind.MODULE and place(state["embedding"]) == "accel"
    assert state["logits"].kind == Kind.TENSOR and place(state["logits"]) == "accel"
    assert state["last"].kind == Kind.TENSOR and place(state["last"]) == "accel"
    assert state["cache"].kind == Kind.UNKNOWN


def test_a_tensor_handed_to_a_constructed_objects_method_does_not_move_the_object():
    # `accelerator.gather(loss)` hands data, not a place: the accelerator is still the object
    # its constructor built (DL301 knows `accelerator.save` by that origin); `setup(device)` may move it
    code = '''
import torch
from accelerate import Accelerator
from somewhere import Engine

def main(loss):
    accelerator = Accelerator()
    engine = Engine()
    gpu_loss = loss.to(accelerator.device)
    accelerator.gather(gpu_loss)
    engine.setup(torch.device("cuda"))
'''
    state = function_state(analyse(code), "main")
    assert state["accelerator"].origin is not None and "Accelerator" in state["accelerator"].origin.how
    assert state["engine"] is UNKNOWN
