"""devicelint.guard on the meta device and on fake CUDA: planted mismatches are reported with
module path, parameter and argument; clean models and legitimate mixes are not; everything the
guard installs is gone after it."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections import OrderedDict

import pytest
import torch
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence
from torch.overrides import _get_current_function_mode_stack

import devicelint
from runtime_models import CleanNet, PositionalNet


# In this process (not a simulation's, which hides the real GPUs) FakeTensorMode, where CUDA is
# available, also makes a real tensor moved to a fake GPU on the real GPU of that index (constant
# propagation; init_gpu_context): a fake cuda:1 then needs a second real GPU.
FAKE_CUDA_1_IN_THIS_PROCESS = pytest.mark.skipif(
    torch.cuda.is_available() and torch.cuda.device_count() < 2,
    reason="in-process FakeTensorMode puts a fake cuda:1 on the real cuda:1 where a GPU is visible; this machine has one",
)

HERE = os.path.dirname(__file__)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 1)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        out, _ = self.attn(x, x, x)
        return self.norm(out)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(4))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()

    def forward(self, x):
        return self.encoder(x)


def planted_model() -> Model:
    model = Model()
    model.encoder.layers[3].attn.to("meta")  # forgotten by a model-parallel split
    return model


def call(model, *args, **kwargs):
    return model(*args, **kwargs)


def all_hooks(model: nn.Module) -> int:
    return sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in model.modules())


def test_import_devicelint_does_not_import_torch():
    code = "import sys, devicelint; assert devicelint.Finding; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_raise_names_module_path_class_parameter_and_argument():
    model = planted_model()
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model):
            model(torch.randn(3, 2, 4))
    message = str(raised.value)
    assert message == (
        "encoder.layers.3.attn (MultiheadAttention): input `args[0]` is on cpu, parameter `in_proj_weight` is on meta; "
        "move the input to meta before the call (`.to(device)`)"
    )
    assert isinstance(raised.value, RuntimeError)
    finding = raised.value.finding
    assert (finding.code, finding.path, finding.line) == ("DL201", __file__, Block.forward.__code__.co_firstlineno + 1)
    context = finding.runtime
    assert (context.module_path, context.module_class) == ("encoder.layers.3.attn", "MultiheadAttention")
    assert (context.tensor, context.tensor_device, context.argument, context.argument_device) == (
        "in_proj_weight", "meta", "args[0]", "cpu",
    )
    assert all_hooks(model) == 0


def test_warn_emits_one_warning_per_distinct_mismatch_and_collect_only_records():
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4).to("meta"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with devicelint.guard(model, on_mismatch="warn") as g:
            for _ in range(3):
                with pytest.raises(RuntimeError):  # torch's own error follows the warning
                    call(model, torch.randn(2, 4))
    device_warnings = [w for w in caught if issubclass(w.category, devicelint.DeviceMismatchWarning)]
    assert [str(w.message) for w in device_warnings] == [
        "2 (Linear): input `args[0]` is on cpu, parameter `weight` is on meta; move the input to meta before the call (`.to(device)`)"
    ]
    # the warning points at the user's line that called the model, not into devicelint or torch
    assert [(w.filename, w.lineno) for w in device_warnings] == [(__file__, call.__code__.co_firstlineno + 1)]
    assert len(g.findings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with devicelint.guard(model, on_mismatch="collect") as g:
            with pytest.raises(RuntimeError):
                model(torch.randn(2, 4))
    assert [f.runtime.module_path for f in g.findings] == ["2"]


def test_nested_inputs_are_named_by_their_path():
    class TakesABatch(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(torch.ones(4, device="meta"))

        def forward(self, x, batch):
            return x

    module = TakesABatch()
    batch = {"ids": torch.ones(2, 4, device="meta"), "extras": [torch.ones(2, device="meta"), torch.ones(2)]}
    with devicelint.guard(module, on_mismatch="collect") as g:
        module(torch.ones(4, device="meta"), batch=batch)
    assert [f.runtime.argument for f in g.findings] == ["kwargs['batch']['extras'][1]"]


@FAKE_CUDA_1_IN_THIS_PROCESS
def test_fake_cuda_devices_zero_and_one():
    model = nn.Sequential(OrderedDict(embed=nn.Embedding(10, 4), head=nn.Linear(4, 2)))
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
        # modules are made outside the mode (a fake parameter cannot be moved again): place each part once
        model.embed.to("cuda:0")
        model.head.to("cuda:1")
        ids = torch.tensor([[1, 2]]).to("cuda:0")
        with devicelint.guard(model, on_mismatch="collect") as g:
            with pytest.raises(RuntimeError):
                model(ids)
    assert [f.message for f in g.findings] == [
        "head (Linear): input `args[0]` is on cuda:0, parameter `weight` is on cuda:1; "
        'move the input to cuda:1 where it enters this module (`.to("cuda:1")`), or move the module to cuda:0'
    ]


def test_clean_models_report_nothing_on_cpu_meta_and_fake_cuda():
    ids = torch.tensor([[1, 2, 3]])
    for place in ("cpu", "meta"):
        model = CleanNet().to(place)
        with devicelint.guard(model, ops=True) as g:
            model(ids.to(place), scale=2.0)
        assert g.findings == []
    model = CleanNet()
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
        model.to("cuda:0")
        with devicelint.guard(model, ops=True) as g:
            model(ids.to("cuda:0"))
    assert g.findings == []


def test_ops_reports_the_users_line_and_the_device_less_factory():
    model = PositionalNet().to("meta")
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4, device="meta"))
    assert len(g.findings) == 1
    finding = g.findings[0]
    source = open(os.path.join(HERE, "runtime_models.py")).read().splitlines()
    assert finding.path == os.path.join(HERE, "runtime_models.py")
    assert source[finding.line - 1].strip() == "hidden = self.proj(x) + positions"
    factory_line = source.index("        positions = torch.arange(x.shape[-1])") + 1
    assert finding.runtime.created_by == f"torch.arange at runtime_models.py:{factory_line}"
    assert finding.message == (
        "`Tensor.add` in PositionalNet.forward mixes devices: `args[1]` is on cpu (created without device= by "
        f"torch.arange at runtime_models.py:{factory_line}), `args[0]` is on meta; create it with `device=` "
        "(`torch.arange(..., device=x.device)` for a tensor `x` it meets); the model was called from "
        f"{finding.runtime.called_from}"
    )
    assert finding.runtime.called_from.startswith("test_runtime_guard.py:")
    assert (finding.runtime.module_path, finding.runtime.module_class) == ("", "PositionalNet")
    assert _get_current_function_mode_stack() == []


def test_ops_name_the_submodule_whose_code_ran_the_op():
    model = nn.Sequential(nn.Linear(4, 4), PositionalNet()).to("meta")
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4, device="meta"))
    assert len(g.findings) == 1
    finding = g.findings[0]
    assert (finding.runtime.module_path, finding.runtime.module_class) == ("1", "PositionalNet")
    assert finding.message.startswith("`Tensor.add` in `1` (PositionalNet) mixes devices")


def test_ops_mode_is_active_only_inside_guarded_forwards():
    model = CleanNet()
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        with pytest.raises(RuntimeError):
            torch.ones(2, device="meta") + torch.ones(2)  # outside any forward: not the guard's business
        assert _get_current_function_mode_stack() == []
        model(torch.tensor([[1]]))
    assert g.findings == []


def test_everything_is_removed_after_exit_after_exceptions_and_on_reentry():
    model = planted_model()
    before = all_hooks(model)
    g = devicelint.guard(model, ops=True, on_mismatch="raise")
    for _ in range(2):  # re-entering the same guard object works
        with pytest.raises(devicelint.DeviceMismatchError):
            with g:
                assert g.active and all_hooks(model) > before
                model(torch.randn(3, 2, 4))
        assert not g.active and all_hooks(model) == before
        assert _get_current_function_mode_stack() == []
    g.__enter__()
    g.__exit__(None, None, None)
    g.remove()  # idempotent
    assert all_hooks(model) == before
    model.encoder.layers[3].attn.to_empty(device="cpu")
    model(torch.randn(3, 2, 4))  # and the model runs as before


def test_nested_guards_each_report_and_unwind():
    model = nn.Sequential(nn.Linear(4, 4).to("meta"))
    with devicelint.guard(model, on_mismatch="collect") as outer:
        with devicelint.guard(model, on_mismatch="collect") as inner:
            with pytest.raises(RuntimeError):
                model(torch.randn(2, 4))
        assert all_hooks(model) == 1
    assert len(outer.findings) == len(inner.findings) == 1
    assert all_hooks(model) == 0


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="on_mismatch must be one of"):
        devicelint.guard(nn.Linear(2, 2), on_mismatch="ignore")
    with pytest.raises(TypeError, match="needs an nn.Module"):
        devicelint.guard(lambda x: x)


def test_dataparallel_replicas_keep_the_module_path_and_are_read_from_former_parameters():
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
    with devicelint.guard(model, on_mismatch="collect") as g:
        # what nn.parallel.replicate does on a GPU machine: the replica shares the original's hook
        # dictionaries and keeps its tensors out of _parameters
        original = model[1]
        replica = original._replicate_for_data_parallel()
        replica._former_parameters = OrderedDict()
        for key, parameter in original._parameters.items():
            copy = parameter.detach().to("meta")
            setattr(replica, key, copy)
            replica._former_parameters[key] = copy
        assert dict(replica._parameters) == {}
        replica(torch.randn(2, 4, device="meta"))  # a replica fed on its own device: fine
        assert g.findings == []
        with pytest.raises(RuntimeError):
            replica(torch.randn(2, 4))
    assert [f.message for f in g.findings] == [
        "1 (Linear): input `args[0]` is on cpu, parameter `weight` is on meta; move the input to meta before the call (`.to(device)`)"
    ]


def test_dataparallel_wrapper_on_a_cpu_machine_is_not_a_false_alarm():
    model = nn.DataParallel(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
    with devicelint.guard(model, ops=True) as g:
        model(torch.randn(2, 4))
    assert g.findings == []


def test_model_parallel_submodules_on_different_devices_are_fine():
    class Split(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.first = nn.Linear(4, 4)
            self.second = nn.Linear(4, 4).to("meta")

        def forward(self, x):
            return self.second(self.first(x).to("meta"))

    model = Split()
    with devicelint.guard(model, ops=True) as g:
        model(torch.randn(2, 4))
    assert g.findings == []


def test_packed_sequences_and_accelerate_managed_modules_are_exempt():
    class Head(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(4, 4, device="meta")

        def forward(self, packed):
            return packed.data

    head = Head()
    data = pack_padded_sequence(torch.randn(3, 2, 4), torch.tensor([3, 2]))
    packed = PackedSequence(data.data.to("meta"), data.batch_sizes)  # batch_sizes stays on the CPU
    assert packed.batch_sizes.device.type == "cpu"

    offloaded = nn.Linear(4, 4, device="meta")
    offloaded._hf_hook = object()  # accelerate moves its weights in a hook of its own
    with devicelint.guard(head) as g1, devicelint.guard(offloaded) as g2:
        head(packed)
        with pytest.raises(RuntimeError):
            offloaded(torch.randn(2, 4))
    assert g1.findings == [] and g2.findings == []


def test_compiled_models_run_under_the_guard_without_false_alarms():
    model = CleanNet()
    compiled = torch.compile(model, backend="eager")
    with devicelint.guard(model, ops=True) as g:
        compiled(torch.tensor([[1, 2]]))
        compiled(torch.tensor([[3, 4]]))
    assert g.findings == []
    assert all_hooks(model) == 0


# ---------------------------------------------------------------------- several modules, advice


def test_a_loss_whose_cpu_weight_was_never_moved_is_caught_beside_the_model():
    model = nn.Sequential(nn.Linear(4, 3)).to("meta")
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 1.0]))  # a buffer, left on the CPU
    inputs, targets = torch.randn(5, 4, device="meta"), torch.tensor([0, 1, 2, 0, 1], device="meta")
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model, criterion):
            call(criterion, model(inputs), targets)
    assert str(raised.value) == (
        "[1] (CrossEntropyLoss): input `args[0]` is on meta, buffer `weight` is on cpu; move the loss to meta as you "
        "moved the model (`criterion.to(device)`): its `weight` stayed on the CPU"
    )
    finding = raised.value.finding
    assert (finding.runtime.module_path, finding.path, finding.line) == ("[1]", __file__, call.__code__.co_firstlineno + 1)
    with pytest.raises(RuntimeError, match="not on the expected device"):  # what PyTorch says without the guard
        criterion(model(inputs), targets)
    assert all_hooks(model) == all_hooks(criterion) == 0
    criterion.to("meta")
    with devicelint.guard(model, criterion) as g:
        criterion(model(inputs), targets)
    assert g.findings == []


def test_later_modules_are_named_by_their_position_and_shared_ones_are_hooked_once():
    encoder = nn.Sequential(nn.Linear(4, 4))
    head = nn.Sequential(nn.ReLU(), nn.Linear(4, 2).to("meta"))
    g = devicelint.guard(encoder, head, encoder[0], on_mismatch="collect")
    assert [path for path, _ in g.named_modules()] == ["", "0", "[1]", "[1].0", "[1].1"]
    with g:
        assert all_hooks(encoder) == 1  # encoder[0] given again: still one hook
        with pytest.raises(RuntimeError):
            head(encoder(torch.randn(2, 4)))
    assert [f.message.split(";")[0] for f in g.findings] == ["[1].1 (Linear): input `args[0]` is on cpu, parameter `weight` is on meta"]


class SmoothedLoss(nn.Module):
    """A loss without tensors of its own, which makes one on the CPU."""

    def forward(self, logits, targets):
        smoothing = torch.full(logits.shape, 0.1)
        return (logits * smoothing).sum()


def test_ops_checks_run_inside_every_guarded_modules_forward():
    model, loss_fn = nn.Linear(4, 3).to("meta"), SmoothedLoss()
    with devicelint.guard(model, loss_fn, ops=True, on_mismatch="collect") as g:
        logits = model(torch.randn(2, 4, device="meta"))
        with pytest.raises(RuntimeError):
            loss_fn(logits, None)
    assert [f.runtime.op for f in g.findings] == ["Tensor.mul"]
    assert g.findings[0].line == SmoothedLoss.forward.__code__.co_firstlineno + 2
    assert _get_current_function_mode_stack() == []


def test_an_optimizer_alone_or_no_module_at_all():
    with pytest.raises(TypeError, match="needs a module to guard"):
        devicelint.guard()
    with pytest.raises(TypeError, match="optimizer= needs a torch.optim.Optimizer"):
        devicelint.guard(nn.Linear(2, 2), optimizer=[nn.Linear(2, 2)])
    with pytest.raises(TypeError, match="needs an nn.Module"):
        devicelint.guard(nn.Linear(2, 2), torch.ones(2))
    model = nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with devicelint.guard(optimizer=optimizer) as g:
        assert g.model is None and g.active
        model(torch.randn(3, 2)).sum().backward()
        optimizer.step()
    assert g.findings == [] and not g.active


def test_advice_for_a_module_left_on_the_cpu():
    model = nn.Sequential(nn.Linear(4, 4).to("meta"), nn.Linear(4, 4))  # the second part was never moved
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model):
            model(torch.randn(2, 4, device="meta"))
    assert str(raised.value) == (
        "1 (Linear): input `args[0]` is on meta, parameter `weight` is on cpu; move the module to meta (`.to(device)`): "
        "it stayed on the CPU"
    )


def test_advice_for_a_parameter_assigned_after_the_move():
    model = nn.Linear(4, 4).to("meta")
    model.bias = nn.Parameter(torch.zeros(4))  # made on the CPU after the model moved
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model):
            model(torch.randn(2, 4, device="meta"))
    assert str(raised.value) == (
        "<root> (Linear): parameter `bias` is on cpu, parameter `weight` is on meta; move the whole module with "
        "`.to(device)` after giving it new parameters or buffers (one assigned after the move stays where it was made)"
    )


class MaskedAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 1)
        self.mask = torch.zeros(2, 2, dtype=torch.bool)  # a plain attribute: .to() leaves it behind

    def forward(self, x):
        return self.attn(x, x, x, attn_mask=self.mask)[0]


def test_advice_for_a_plain_tensor_attribute_handed_to_a_submodule():
    model = MaskedAttention().to("meta")
    assert model.mask.device.type == "cpu"
    with pytest.raises(devicelint.DeviceMismatchError) as raised:
        with devicelint.guard(model):
            model(torch.randn(2, 1, 4, device="meta"))
    assert str(raised.value) == (
        "attn (MultiheadAttention): input `kwargs['attn_mask']` is on cpu, parameter `in_proj_weight` is on meta; "
        "it is `self.mask` of MaskedAttention, a plain tensor attribute, which `.to()` does not move: "
        'register it with `self.register_buffer("mask", ...)` in `__init__`'
    )


def test_op_level_warnings_point_at_the_users_line():
    model = PositionalNet().to("meta")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with devicelint.guard(model, ops=True, on_mismatch="warn"):
            with pytest.raises(RuntimeError):
                model(torch.randn(2, 4, device="meta"))
    device_warnings = [w for w in caught if issubclass(w.category, devicelint.DeviceMismatchWarning)]
    assert len(device_warnings) == 1
    source = open(os.path.join(HERE, "runtime_models.py")).read().splitlines()
    assert device_warnings[0].filename == os.path.join(HERE, "runtime_models.py")
    assert source[device_warnings[0].lineno - 1].strip() == "hidden = self.proj(x) + positions"
