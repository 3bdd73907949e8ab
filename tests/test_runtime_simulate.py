"""devicelint.simulate and `devicelint simulate`: a GPU run simulated on a CPU-only machine.

Every simulate call starts a process that imports torch (a few seconds), so each test makes as
few as it can, and checks several things per call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings

import pytest
import torch
from torch import nn

import devicelint
import simulate_models
from devicelint.runtime.simulate import as_simulation, child_environment, fake_cuda
from runtime_models import CrashingNet, PositionalNet

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "runtime_models.py")
SIMULATE_MODELS = os.path.join(HERE, "simulate_models.py")


def line_of(text: str, path: str = MODELS) -> int:
    return open(path).read().splitlines().index(text) + 1


def planted(name: str) -> int:
    """The line of simulate_models.py marked ``# planted: NAME``."""
    lines = open(SIMULATE_MODELS).read().splitlines()
    (found,) = [number for number, line in enumerate(lines, 1) if line.endswith(f"# planted: {name}")]
    return found


def lines_of(findings) -> list[int]:
    return sorted(finding.line for finding in findings)


def test_simulate_reports_every_cpu_tensor_a_forward_mixes_in():
    findings = devicelint.simulate(PositionalNet(), torch.randn(2, 4), device="cuda:0")
    assert all(isinstance(f, devicelint.Finding) for f in findings)
    assert [(f.path, f.line, f.runtime.op, f.runtime.argument_device, f.runtime.tensor_device) for f in findings] == [
        (MODELS, line_of("        hidden = self.proj(x) + positions"), "Tensor.add", "cpu", "cuda:0"),
        (MODELS, line_of("        return hidden * mask"), "Tensor.mul", "cpu", "cuda:0"),
    ]
    assert [f.runtime.created_by for f in findings] == [
        f"torch.arange at runtime_models.py:{line_of('        positions = torch.arange(x.shape[-1])')}",
        f"torch.ones at runtime_models.py:{line_of('        mask = torch.ones(x.shape)')}",
    ]
    assert findings.unsupported == []
    assert findings.complete and findings.stopped is None


def test_a_run_that_stops_early_says_so_and_keeps_what_it_found():
    with pytest.warns(devicelint.SimulationIncompleteWarning, match="did not finish: it stopped in the forward"):
        result = devicelint.simulate(simulate_models.Thresholded(), torch.randn(2, 4))
    assert not result.complete
    branch = planted("before the branch") + 1
    assert (result.stage, result.op, result.where) == ("forward", "Tensor.__bool__", f"{SIMULATE_MODELS}:{branch}")
    assert "reads a value of a tensor on the simulated GPU" in result.reason
    assert lines_of(result) == [planted("before the branch")]  # found before it stopped
    assert "incomplete" in repr(result)

    with pytest.warns(devicelint.SimulationIncompleteWarning):
        crashed = devicelint.simulate(CrashingNet(), torch.randn(2, 4))
    assert (crashed.complete, crashed.stage, crashed.reason) == (False, "forward", "ValueError: broken model")
    raise_line = line_of('        raise ValueError("broken model")')
    assert crashed.where == f"{MODELS}:{raise_line}"
    assert crashed == []
    assert crashed  # an incomplete run is never falsy: `assert not simulate(...)` cannot pass on it
    from devicelint.runtime.simulate import SimulationResult

    assert not SimulationResult() and SimulationResult([object()])


def test_what_keeps_a_simulation_from_starting_is_a_simulation_error():
    locked = PositionalNet()
    locked.lock = threading.Lock()
    with pytest.raises(devicelint.SimulationError, match="cannot be pickled"):
        devicelint.simulate(locked, torch.randn(2, 4))
    with pytest.raises(devicelint.SimulationError, match="'cuda' or 'cuda:N' with N from 0 to 7"):
        devicelint.simulate(PositionalNet(), torch.randn(2, 4), device="cuda:9")
    with pytest.raises(devicelint.SimulationError, match="takes no inputs"):
        devicelint.simulate(simulate_models.make_training_step, torch.randn(2))
    expected = rf"make_failing\(\) failed at {SIMULATE_MODELS}:\d+: ValueError: no checkpoint here"
    with pytest.raises(devicelint.SimulationError, match=expected):
        devicelint.simulate(simulate_models.make_failing)


def test_a_factory_may_return_a_simulation_a_dict_or_the_old_tuples():
    model, inputs = object(), (1, 2)
    assert devicelint.Simulation(model, inputs[0]).inputs == (1,)
    assert as_simulation((model, inputs), "f()") == devicelint.Simulation(model, inputs)
    assert as_simulation((model, inputs, {"scale": 2}), "f()").kwargs == {"scale": 2}
    step = as_simulation({"model": model, "inputs": inputs, "loss_fn": len}, "f()")
    assert (step.model, step.inputs, step.loss_fn, step.training_step) == (model, inputs, len, True)
    with pytest.raises(devicelint.SimulationError, match="f\\(\\) returned a dict with unknown keys 'lossfn'"):
        as_simulation({"model": model, "lossfn": len}, "f()")
    with pytest.raises(devicelint.SimulationError, match="f\\(\\) must return a devicelint.Simulation"):
        as_simulation(model, "f()")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "devicelint", "simulate", *args], cwd=HERE, capture_output=True, text=True, timeout=300
    )


def test_cli_simulate_prints_findings_in_the_linters_formats_and_exits_by_them():
    buggy = run_cli("runtime_models:make_positional", "--format", "json")
    assert buggy.returncode == 1, buggy.stderr
    items = json.loads(buggy.stdout)
    assert [(item["code"], item["path"], item["line"]) for item in items] == [
        ("DL201", "runtime_models.py", line_of("        hidden = self.proj(x) + positions")),
        ("DL201", "runtime_models.py", line_of("        return hidden * mask")),
    ]
    clean = run_cli("runtime_models:make_clean")
    assert (clean.returncode, clean.stdout) == (0, "All checks passed.\n"), clean.stderr
    missing = run_cli("runtime_models:no_such_factory")
    assert missing.returncode == 2
    assert "cannot import runtime_models:no_such_factory" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.slow
def test_cli_simulate_runs_a_training_step_and_exits_2_when_the_run_stops():
    # the factory moves the model after building the optimizer and moves the loss: clean
    clean = run_cli("simulate_models:make_training_step")
    assert (clean.returncode, clean.stdout) == (0, "All checks passed.\n"), clean.stderr
    unmoved = run_cli("simulate_models:make_training_step_with_unmoved_loss", "--format", "json")
    assert unmoved.returncode == 1, unmoved.stderr
    (item,) = json.loads(unmoved.stdout)
    assert item["message"].startswith("loss_fn (CrossEntropyLoss): input `args[0]` is on cuda:0, buffer `weight` is on cpu")
    # at the factory: a torch loss has no line of the user's own
    factory_line = line_of("def make_training_step_with_unmoved_loss() -> devicelint.Simulation:", SIMULATE_MODELS)
    assert (item["path"], item["line"]) == ("simulate_models.py", factory_line)

    stopped = run_cli("simulate_models:make_packed_with_gpu_lengths")
    assert stopped.returncode == 2
    assert "All checks passed" not in stopped.stdout
    assert f"simulate_models.py:{planted('lengths')}:1: DL201" in stopped.stdout  # PyTorch's own stop is a finding
    assert "devicelint: error: the simulation did not finish" in stopped.stderr
    assert "it stopped in the forward at `torch._pack_padded_sequence`" in stopped.stderr
    assert "'lengths' argument should be a 1D CPU int64 tensor" in stopped.stderr
    assert "Traceback" not in stopped.stderr


def test_the_fake_cuda_guard_runs_what_stock_fake_tensors_cannot(monkeypatch):
    from runtime_models import TrainModeNet

    bug_line = line_of("        return self.norm(self.proj(x)) + bias")
    with_guard = devicelint.simulate(TrainModeNet(), torch.randn(8, 4))
    assert [(f.line, f.runtime.op) for f in with_guard] == [(bug_line, "Tensor.add")]
    assert with_guard.unsupported == []  # train-mode BatchNorm ran on fake CUDA

    monkeypatch.setenv("DEVICELINT_FAKE_CUDA_GUARD", "0")
    if torch.backends.cuda.is_built():
        # a CUDA build: where it sees no GPU (the simulation hides them) PyTorch's FakeTensorMode
        # puts a fake CUDA device guard of its own in place, so train-mode BatchNorm runs without
        # the shim; only the training step below still needs it
        stock = devicelint.simulate(TrainModeNet(), torch.randn(8, 4))
        assert [(f.line, f.runtime.op) for f in stock] == [(bug_line, "Tensor.add")]
        assert (stock.unsupported, stock.complete) == ([], True)
    else:
        with pytest.warns(UserWarning) as warned:
            stock = devicelint.simulate(TrainModeNet(), torch.randn(8, 4))
        assert [str(w.message) for w in warned] == [f"devicelint.simulate: {note}" for note in stock.unsupported]
        assert [(f.line, f.runtime.op) for f in stock] == [(bug_line, "Tensor.add")]  # found again in eval mode
        assert stock.unsupported[0].startswith("the fake CUDA device guard is turned off")
        assert "in train mode; simulated again in eval mode" in stock.unsupported[1]
        assert stock.complete

    # without the shim, autograd on fake CUDA can take the interpreter down: a training step is
    # not attempted, and the result says so instead of passing
    with pytest.warns(UserWarning) as warned:  # the notes above, and that it did not finish
        untrained = devicelint.simulate(TrainModeNet(), torch.randn(8, 4), loss_fn=torch.sum)
    assert [w.category for w in warned][-1] is devicelint.SimulationIncompleteWarning
    assert (untrained.complete, untrained.stage) == (False, "backward")
    assert "needs devicelint's fake CUDA shim, which is not loaded" in untrained.reason
    assert [f.line for f in untrained] == [bug_line]  # the forward ran


ZOO_LINES = ["lstm", "lstm time-major", "gru", "gru time-major", "packed", "encoder", "transformer"]


def test_recurrent_and_transformer_layers_train_on_fake_cuda():
    """LSTM and GRU (batch-first and time-major), packed sequences with CPU lengths (handed over,
    and moved back with .cpu()), TransformerEncoder with a padding mask, nn.Transformer with a
    causal mask: forward, backward and an Adam step, in train mode. A planted CPU tensor after
    each layer is found, so each layer ran and the run went on past it."""
    result = devicelint.simulate(simulate_models.make_zoo_training_step)
    assert result.complete, result.stopped
    assert lines_of(result) == sorted(planted(name) for name in ZOO_LINES)
    assert {f.runtime.op for f in result} == {"Tensor.add"}
    assert result.unsupported == []


@pytest.mark.skipif(
    torch.backends.cuda.is_built(),
    reason="pins what stock fake tensors lack on a CPU build of PyTorch; in a CUDA build's process GRU takes cuDNN, "
    "and a missing fake kernel falls back to the real GPU",
)
def test_what_stock_fake_tensors_lack_that_the_simulation_adds():
    """Why the simulation carries its own GRU kernels and packing (execution.py), pinned on the
    torch the tests run: on stock fake CUDA tensors (no grad, so nothing can abort) GRU's fused
    cell has no meta kernel, and PyTorch's fake _pack_padded_sequence refuses to run. On a CPU
    build: in this process (unlike the simulation's) a CUDA build's RNNs take cuDNN, and where a
    GPU is visible an operation without a fake kernel runs on it."""
    from torch._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode

    gru = nn.GRU(4, 8)
    with torch.no_grad(), FakeTensorMode(allow_non_fake_inputs=True), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PyTorch was compiled without cuDNN")  # a CPU build: so it is
        gru.to("cuda:0")
        x = torch.randn(3, 2, 4).to("cuda:0")
        with pytest.raises(Exception) as raised:
            gru(x)
        assert "_thnn_fused_gru_cell" in str(raised.value.__context__)
        with pytest.raises(DynamicOutputShapeException):
            nn.utils.rnn.pack_padded_sequence(x, torch.tensor([3, 2]))


def test_recurrent_and_transformer_layers_run_in_eval_mode():
    """Eval mode without gradients is where TransformerEncoder considers its fast path (and reads
    its padding mask's values to decide)."""
    result = devicelint.simulate(simulate_models.make_zoo_in_eval_mode)
    assert result.complete, result.stopped
    assert lines_of(result) == sorted(planted(name) for name in ZOO_LINES)


def test_model_parallel_halves_keep_their_devices():
    """Two tutorial-style pipelines (halves on cuda:0 and cuda:1) built by a factory on the
    simulated GPUs, trained one step: the one that moves between its halves is clean, the one
    that forgets is reported, naming both devices."""
    result = devicelint.simulate(simulate_models.make_model_parallel)
    assert result.complete, result.stopped
    (finding,) = result
    assert finding.line == planted("second half")
    assert finding.message.startswith("wrong.second (Linear): input `args[0]` is on cuda:0, parameter `weight` is on cuda:1")
    assert (finding.runtime.argument_device, finding.runtime.tensor_device) == ("cuda:0", "cuda:1")


def test_a_training_step_finds_the_unmoved_loss_weight_and_optimizer_state_left_behind():
    model = simulate_models.Classifier()
    trained = torch.optim.Adam(model.parameters())
    nn.CrossEntropyLoss()(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 1, 0])).backward()
    trained.step()
    optimizer = torch.optim.Adam(model.parameters())
    optimizer.load_state_dict(trained.state_dict())  # on the CPU, before the model moves
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]))  # never moved
    result = devicelint.simulate(
        model, torch.randn(5, 4), target=torch.tensor([0, 1, 2, 1, 0]), loss_fn=criterion, optimizer=optimizer
    )
    assert result.complete, result.stopped
    call_line = line_of("    result = devicelint.simulate(", __file__)
    assert {(f.path, f.line) for f in result} == {(__file__, call_line)}  # torch's code: the call's line
    loss_findings = [f for f in result if f.code == "DL201"]
    assert [f.message.split(";")[0] for f in loss_findings] == [
        "loss_fn (CrossEntropyLoss): input `args[0]` is on cuda:0, buffer `weight` is on cpu"
    ]
    state_findings = {
        (f.runtime.module_path, f.runtime.tensor, f.runtime.argument, f.runtime.argument_device)
        for f in result
        if f.code == "DL407"
    }
    assert ("body.0", "weight", "state['exp_avg']", "cpu") in state_findings
    assert ("body.2", "bias", "state['exp_avg_sq']", "cpu") in state_findings
    assert len(state_findings) == 8  # exp_avg and exp_avg_sq of 4 parameters; the step count is CPU by design


def test_a_loss_function_with_a_cpu_weight_is_checked_op_by_op():
    weight = torch.tensor([1.0, 2.0, 3.0])

    def weighted_loss(output, target):
        return nn.functional.cross_entropy(output, target, weight=weight)

    result = devicelint.simulate(
        simulate_models.Classifier(), torch.randn(5, 4), target=torch.tensor([0, 1, 2, 1, 0]), loss_fn=weighted_loss
    )
    assert result.complete, result.stopped
    (finding,) = result
    loss_line = line_of("        return nn.functional.cross_entropy(output, target, weight=weight)", __file__)
    assert (finding.path, finding.line) == (__file__, loss_line)
    assert finding.runtime.op == "torch.nn.functional.cross_entropy"
    assert (finding.runtime.argument, finding.runtime.argument_device) == ("kwargs['weight']", "cpu")


SCRIPT = '''\
import json

import torch
from torch import nn

import devicelint


class ScriptNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x) + torch.ones(4)


result = devicelint.simulate(ScriptNet(), torch.randn(2, 4))
print(json.dumps({"complete": result.complete, "found": [[f.path, f.line, f.runtime.op] for f in result]}))
'''


@pytest.mark.slow
def test_a_model_class_of_the_main_script_is_simulated(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    ran = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    bug_line = SCRIPT.splitlines().index("        return self.proj(x) + torch.ones(4)") + 1
    assert answer == {"complete": True, "found": [[str(script), bug_line, "Tensor.add"]]}


CELL = '''\
import torch
from torch import nn


class CellNet(nn.Module):
    def __init__(self, head):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.head = head

    def forward(self, x):
        return self.head(self.proj(x) * torch.arange(4))
'''


def test_classes_of_a_notebook_and_of_a_test_function_are_simulated():
    """What a notebook does, without a kernel: IPython compiles each cell under a file name of
    its own and runs it in the namespace of a ``__main__`` module, so its classes claim
    ``__main__`` but are not attributes of the running ``__main__`` (here, pytest's); plain
    pickle cannot find them there. The head is a class local to this test function."""

    class LocalHead(nn.Module):
        def forward(self, x):
            return x - torch.zeros(4)

    namespace = {"__name__": "__main__"}
    exec(compile(CELL, "<notebook cell 3>", "exec"), namespace)
    model = namespace["CellNet"](LocalHead())
    assert type(model).__module__ == "__main__" and not hasattr(sys.modules["__main__"], "CellNet")
    result = devicelint.simulate(model, torch.randn(2, 4))
    assert result.complete, result.stopped
    assert [(f.path, f.line, f.runtime.op) for f in result] == [
        ("<notebook cell 3>", CELL.splitlines().index("        return self.head(self.proj(x) * torch.arange(4))") + 1, "Tensor.mul"),
        (__file__, line_of("            return x - torch.zeros(4)", __file__), "Tensor.sub"),
    ]


def test_the_simulation_process_sees_no_real_gpu(monkeypatch):
    """Its fake GPUs are the only ones it sees (a fake cuda:1 needs no second real GPU); the rest
    of the caller's environment is kept."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    environment = child_environment()
    assert environment["CUDA_VISIBLE_DEVICES"] == environment["HIP_VISIBLE_DEVICES"] == ""
    assert environment["PATH"] == os.environ["PATH"] and os.environ["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_the_shim_build_name_is_stable_within_an_environment_and_differs_across_them():
    base = ("2.13.0+cpu", "/envs/a/site-packages/torch", "cpython-311-x86_64-linux-gnu", "/envs/a")
    name = fake_cuda.build_name(*base)
    assert name == fake_cuda.build_name(*base)
    assert name.startswith("devicelint_fake_cuda_")
    for index, other in enumerate(("2.12.0+cpu", "/envs/b/site-packages/torch", "cpython-312-x86_64-linux-gnu", "/envs/b")):
        changed = list(base)
        changed[index] = other
        assert fake_cuda.build_name(*changed) != name, other
    assert fake_cuda.build_name(*base, source=fake_cuda.SOURCE + "\n") != name
    assert fake_cuda.current_build_name() == fake_cuda.current_build_name()
    assert os.path.basename(fake_cuda.library_path()) == fake_cuda.current_build_name() + ".so"


@pytest.mark.slow
def test_the_shim_is_built_once_and_reused(tmp_path, monkeypatch):
    """In an empty extension folder the first simulation builds the shim; the second loads that
    build: the library file is not written again, and no build folder is added."""
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    library = fake_cuda.library_path()
    assert os.path.dirname(os.path.dirname(library)) == str(tmp_path) and not os.path.exists(library)
    first = devicelint.simulate(PositionalNet(), torch.randn(2, 4))
    assert os.path.exists(library)
    built = os.stat(library).st_mtime_ns
    os.utime(library, ns=(built - 10**9, built - 10**9))  # a rewrite would move it forward again
    second = devicelint.simulate(PositionalNet(), torch.randn(2, 4))
    assert os.stat(library).st_mtime_ns == built - 10**9
    assert os.listdir(tmp_path) == [os.path.basename(os.path.dirname(library))]
    assert len(first) == len(second) == 2 and first.unsupported == second.unsupported == []
