"""guard(ops=True): indexing checked by PyTorch's own rule, no finding where PyTorch accepts a CPU
tensor (lengths, batch_sizes, ctc_loss), the odd tensor out blamed, factory provenance kept
through views and casts, advice in the message, and the model's call site. On the CPU, the
``meta`` device and fake CUDA tensors stand for the accelerator; meta runs several of these
mixes silently, which is why the guard's verdict, not torch's, is what is asserted."""

from __future__ import annotations

import gc
import inspect
import os

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.nn.utils.rnn import pack_padded_sequence

import devicelint
from devicelint.runtime.ops import reference_device
from runtime_models import PositionalNet


# In this process (not a simulation's, which hides the real GPUs) FakeTensorMode, where CUDA is
# available, also makes a real tensor moved to a fake GPU on the real GPU of that index (constant
# propagation; init_gpu_context): a fake cuda:1 then needs a second real GPU.
FAKE_CUDA_1_IN_THIS_PROCESS = pytest.mark.skipif(
    torch.cuda.is_available() and torch.cuda.device_count() < 2,
    reason="in-process FakeTensorMode puts a fake cuda:1 on the real cuda:1 where a GPU is visible; this machine has one",
)

HERE = os.path.basename(__file__)
MOVE_IT = "; move it to meta before this operation (`.to(x.device)` for a tensor `x` it meets)"


def line_of(function, text: str) -> int:
    """The line of ``function``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(function)
    return first + next(number for number, line in enumerate(lines) if text in line)


def run(model: nn.Module, *args, **kwargs) -> list:
    """One forward under guard(ops=True, on_mismatch="collect"); torch's own error, if any, is
    swallowed (meta and fake tensors raise for some of the mixes, or for lacking data)."""
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        try:
            model(*args, **kwargs)
        except (RuntimeError, NotImplementedError):
            pass
    return g.findings


class Lookup(nn.Module):
    """A table indexed in forward; ``how`` picks the indexing form."""

    def __init__(self, how: str, table_as_buffer: bool = False) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        table = torch.randn(10, 4)
        if table_as_buffer:
            self.register_buffer("table", table)
        else:
            self.table = table  # a plain attribute: .to() leaves it on the CPU
        self.how = how

    def forward(self, index):
        if self.how == "subscript":
            rows = self.table[index]
        elif self.how == "columns":
            rows = self.table.t()[:, index]
        elif self.how == "index_select":
            rows = self.table.index_select(0, index)
        elif self.how == "gather":
            rows = torch.gather(self.table, 0, index[:, None].expand(-1, 4))
        else:
            rows = F.embedding(index, self.table)
        return rows


# ---------------------------------------------------------------------------- indexing


def test_cpu_table_indexed_with_accelerator_ids_is_reported_although_meta_accepts_it():
    ids = torch.tensor([1, 2], device="meta")
    assert torch.randn(10, 4)[ids].device.type == "cpu"  # meta does not model the rule
    findings = run(Lookup("subscript").to("meta"), ids)
    assert [f.message for f in findings] == [
        "`Tensor.__getitem__` in Lookup.forward indexes a tensor on cpu with an index on meta, which PyTorch "
        "rejects (indices must be on the CPU or on the indexed tensor's device): `args[0]` is on cpu, `args[1]` is "
        "on meta; it is `self.table` of Lookup, a plain tensor attribute, which `.to()` does not move: register it "
        'with `self.register_buffer("table", ...)` in `__init__`'
    ]
    finding = findings[0]
    assert (finding.path, finding.line) == (__file__, line_of(Lookup.forward, "rows = self.table[index]"))
    assert (finding.runtime.op, finding.runtime.argument, finding.runtime.argument_device) == (
        "Tensor.__getitem__", "args[0]", "cpu",
    )


def test_indexing_forms_pytorch_rejects_are_reported_and_those_it_accepts_are_not():
    meta_ids = torch.tensor([1, 2], device="meta")
    cpu_ids = torch.tensor([1, 2])
    # a CPU table read with accelerator ids: every form
    for how, path in (("subscript", "args[0]"), ("columns", "args[0]"), ("index_select", "args[0]"),
                      ("gather", "args[0]"), ("embedding", "args[1]")):
        findings = run(Lookup(how).to("meta"), meta_ids)
        assert [(f.runtime.argument, f.runtime.argument_device) for f in findings] == [(path, "cpu")], how
    # an accelerator table read with CPU indices: legal for a subscript, not for the index ops
    assert run(Lookup("subscript", table_as_buffer=True).to("meta"), cpu_ids) == []
    assert run(Lookup("columns", table_as_buffer=True).to("meta"), cpu_ids) == []
    for how in ("index_select", "gather", "embedding"):
        findings = run(Lookup(how, table_as_buffer=True).to("meta"), cpu_ids)
        # the ids are the odd ones out: the table is on the module's device
        assert [(f.runtime.argument, f.runtime.argument_device) for f in findings] == [
            ("args[0]" if how == "embedding" else "args[2]", "cpu")
        ], how


def test_masks_tuples_and_scalar_indices():
    class Indexing(nn.Module):  # no parameters: a tie between the two devices blames the CPU one
        def forward(self, table, *index):
            return table[index if len(index) > 1 else index[0]]

    model = Indexing()
    table = torch.randn(4, 4)
    mask = torch.ones(4, 4, dtype=torch.bool, device="meta")
    assert [f.runtime.argument for f in run(model, table, mask)] == ["args[0]"]
    assert [f.runtime.argument for f in run(model, table.to("meta"), torch.ones(4, 4, dtype=torch.bool))] == []
    # a tuple index: the accelerator part makes the read illegal
    assert [f.runtime.argument for f in run(model, table, slice(None), torch.tensor([0], device="meta"))] == [
        "args[0]"
    ]
    # a 0-dim integer index is read as a number on any device (meta cannot read it, so torch raises)
    assert run(model, table, torch.tensor(1, device="meta")) == []


def test_fake_cuda_cpu_table_with_cuda_ids_raises_before_torch_and_the_legal_direction_is_quiet():
    model = Lookup("subscript")
    on_device = Lookup("subscript", table_as_buffer=True)
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
        # modules are made outside the mode (a fake parameter cannot be moved again): place each once
        model.to("cuda:0")
        on_device.to("cuda:0")
        ids = torch.tensor([1, 2]).to("cuda:0")
        with pytest.raises(devicelint.DeviceMismatchError, match="indexes a tensor on cpu with an index on cuda:0"):
            with devicelint.guard(model, ops=True):
                model(ids)
        with devicelint.guard(on_device, ops=True, on_mismatch="collect") as g:
            try:
                on_device(torch.tensor([1, 2]))
            except RuntimeError as error:  # a stock CPU build cannot index fake CUDA tensors
                assert "not linked with support for cuda" in str(error)
    assert g.findings == []


# ---------------------------------------------------------------------------- legal CPU tensors


class Encoder(nn.Module):
    """Lengths on the CPU, as pack_padded_sequence requires, handed to a module with its own
    parameter; the LSTM receives the packed sequence's CPU batch_sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 4, batch_first=True)
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.embed(ids), lengths, batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        return output.data * self.scale


def test_packed_sequences_and_their_cpu_lengths_are_not_false_alarms():
    model = Encoder().to("meta")
    ids = torch.tensor([[1, 2, 3], [4, 5, 0]], device="meta")
    with devicelint.guard(model, ops=True, on_mismatch="raise"):
        out = model(ids, torch.tensor([3, 2]))
    assert out.shape == (5, 4)


def test_cpu_indices_are_judged_where_they_are_used_not_at_a_modules_boundary():
    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.bias = nn.Parameter(torch.zeros(4))

        def forward(self, ids):
            return self.embed(ids) + self.bias

    findings = run(Wrapper().to("meta"), torch.tensor([1, 2]))
    # not at Wrapper (its own code might use them as lengths), but at nn.Embedding, which needs them
    assert sorted((f.runtime.module_path, f.runtime.argument) for f in findings) == [("embed", "args[0]")] * 2
    assert {f.runtime.op for f in findings} == {None, "torch.nn.functional.embedding"}
    # floats, bools and uint8 images handed to a module are still inputs that were not moved
    for value in (torch.ones(2), torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.uint8)):
        with devicelint.guard(nn.Linear(2, 2, device="meta"), on_mismatch="collect") as g:
            try:
                g.model(value)
            except RuntimeError:
                pass
        assert [f.runtime.argument for f in g.findings] == ["args[0]"], value.dtype


class Recognizer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 5)

    def forward(self, features, targets, input_lengths, target_lengths):
        log_probs = self.proj(features).log_softmax(-1)
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths)


def test_ctc_loss_takes_targets_and_lengths_from_the_cpu():
    model = Recognizer().to("meta")
    features = torch.randn(6, 2, 4, device="meta")
    cpu = (torch.tensor([[1, 2], [3, 4]]), torch.tensor([6, 6]), torch.tensor([2, 2]))
    with devicelint.guard(model, ops=True, on_mismatch="raise"):
        with pytest.raises(NotImplementedError, match="Meta"):  # meta has no ctc kernel: torch's, not ours
            model(features, *cpu)


# ---------------------------------------------------------------------------- blame


def test_the_odd_tensor_out_is_blamed_not_the_first_argument():
    class Selects(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(10, 4)

        def forward(self, ids, condition):
            x = self.embed(ids)
            return torch.where(condition, x, x * 2)

    ids = torch.tensor([[1, 2]], device="meta")
    findings = run(Selects().to("meta"), ids, torch.ones(1, 2, 4, dtype=torch.bool))
    assert [(f.runtime.op, f.runtime.argument, f.runtime.tensor) for f in findings] == [
        ("torch.where", "args[0]", "args[1]")
    ]
    assert findings[0].message.endswith(MOVE_IT)


def test_reference_device_rules():
    cpu, meta, fake0, fake1 = (torch.device(name) for name in ("cpu", "meta", "cuda:0", "cuda:1"))
    assert reference_device([cpu, meta], module_device=cpu) == cpu  # 1: the module's device
    assert reference_device([cpu, cpu, meta], module_device=None) == cpu  # 2: the majority
    assert reference_device([meta, meta, cpu], module_device=fake0) == meta  # 1 needs the module's device present
    assert reference_device([cpu, meta], module_device=None) == meta  # 3: on a tie, not the CPU
    assert reference_device([fake1, fake0], module_device=None) == fake1  # 4: the first


def test_without_parameters_the_majority_decides():
    class Concatenates(nn.Module):
        def forward(self, a, b, c):
            return torch.cat([a, b, c])

    model = Concatenates()
    findings = run(model, torch.ones(2, device="meta"), torch.ones(2), torch.ones(2))
    assert [(f.runtime.argument, f.runtime.argument_device) for f in findings] == [("args[0][0]", "meta")]


# ---------------------------------------------------------------------------- provenance and advice


class Positions(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, unrelated=None):
        if unrelated is None:
            positions = torch.arange(x.shape[-1]).float()[None] * 2  # a view and a cast of a CPU factory tensor
        else:
            positions = torch.ones(4) + unrelated  # a factory tensor computed with a tensor of another origin
        return self.proj(x) + positions


def test_provenance_survives_views_casts_and_arithmetic_among_factory_tensors_only():
    x = torch.randn(2, 4, device="meta")
    findings = run(Positions().to("meta"), x) + run(Positions().to("meta"), x, torch.ones(4))
    factory_line = line_of(Positions.forward, "positions = torch.arange")
    assert [f.runtime.created_by for f in findings] == [f"torch.arange at {HERE}:{factory_line}", None]
    assert findings[0].message == (
        "`Tensor.add` in Positions.forward mixes devices: `args[1]` is on cpu (computed from a tensor created without "
        f"device= by torch.arange at {HERE}:{factory_line}), `args[0]` is on meta; create the tensor it was computed "
        "from with `device=` (`torch.arange(..., device=x.device)` for a tensor `x` it meets)"
    )
    assert findings[1].message.endswith(MOVE_IT)


def test_a_factory_tensor_moved_to_the_right_device_loses_its_provenance():
    class Moves(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            positions = torch.arange(4).to(x.device)  # fine: on the input's device now
            return self.proj(x) + positions

    assert run(Moves().to("meta"), torch.randn(2, 4, device="meta")) == []


def test_the_models_call_site_is_named_when_the_op_is_in_another_file():
    model = PositionalNet().to("meta")
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        with pytest.raises(RuntimeError):
            model(torch.randn(2, 4, device="meta"))  # the call site
    call_line = line_of(test_the_models_call_site_is_named_when_the_op_is_in_another_file, "# the call site")
    assert [f.runtime.called_from for f in g.findings] == [f"{HERE}:{call_line}"]
    assert g.findings[0].path.endswith("runtime_models.py")
    assert g.findings[0].message.endswith(f"; the model was called from {HERE}:{call_line}")


def test_origins_are_forgotten_with_their_tensors():
    model = Positions().to("meta")
    with devicelint.guard(model, ops=True, on_mismatch="collect") as g:
        try:
            model(torch.randn(2, 4, device="meta"))
        except RuntimeError:
            pass
        gc.collect()
        assert g._op_state.origins.entries == {}  # nothing alive: the per-op propagation is skipped


@FAKE_CUDA_1_IN_THIS_PROCESS
def test_fake_cuda_blame_follows_the_module_not_the_argument_order():
    class Selects(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(10, 4)

        def forward(self, ids, condition):
            x = F.embedding(ids, self.embed.weight)
            return torch.where(condition, x, x * 2)

    model = Selects()
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True):
        model.to("cuda:1")
        cuda_ids = torch.tensor([[1, 2]]).to("cuda:1")
        cpu_ids, cpu_condition = torch.tensor([[1, 2]]), torch.ones(1, 2, 4, dtype=torch.bool)
        blamed = []
        cases = ((cpu_ids, cpu_condition.to("cuda:1")), (cuda_ids, cpu_condition), (cuda_ids.to("cuda:0"), cpu_condition))
        for ids, condition in cases:
            with pytest.raises(devicelint.DeviceMismatchError) as raised:
                with devicelint.guard(model, ops=True):
                    model(ids, condition)
            context = raised.value.finding.runtime
            blamed.append((context.op, context.argument, context.argument_device, context.tensor_device))
    assert blamed == [
        ("torch.nn.functional.embedding", "args[0]", "cpu", "cuda:1"),
        ("torch.where", "args[0]", "cpu", "cuda:1"),
        ("torch.nn.functional.embedding", "args[0]", "cuda:0", "cuda:1"),  # the weight's device wins
    ]


@pytest.mark.cuda
def test_on_a_real_gpu_the_guard_agrees_with_pytorch():
    """What the CPU tests assume about PyTorch's rules, checked against real CUDA kernels: the
    guard reports exactly the mixes PyTorch rejects."""
    table, ids = torch.randn(10, 4), torch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="indices should be either on cpu or on the same device"):
        table[ids.cuda()]
    assert table.cuda()[ids].device.type == "cuda"
    assert table[torch.tensor(1, device="cuda")].shape == (4,)  # a 0-dim index is read as a number
    with pytest.raises(RuntimeError):
        F.embedding(ids, table.cuda())
    findings = run(Lookup("subscript").cuda(), ids.cuda())
    assert [(f.runtime.argument, f.runtime.argument_device) for f in findings] == [("args[0]", "cpu")]
    assert run(Lookup("subscript", table_as_buffer=True).cuda(), ids) == []
    model = Encoder().cuda()
    with devicelint.guard(model, ops=True):
        model(torch.tensor([[1, 2, 3], [4, 5, 0]], device="cuda"), torch.tensor([3, 2]))
    recognizer = Recognizer().cuda()
    cpu_targets = (torch.tensor([[1, 2], [3, 4]]), torch.tensor([6, 6]), torch.tensor([2, 2]))
    features = torch.randn(6, 2, 4, device="cuda")
    recognizer(features, *cpu_targets)  # PyTorch accepts it, so the guard must too
    with devicelint.guard(recognizer, ops=True):
        recognizer(features, *cpu_targets)
