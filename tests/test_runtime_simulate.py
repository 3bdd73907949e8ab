"""devicelint.simulate and `devicelint simulate`: a GPU run simulated on a CPU-only machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

import devicelint
from runtime_models import CrashingNet, PositionalNet

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "runtime_models.py")


def line_of(text: str) -> int:
    return open(MODELS).read().splitlines().index(text) + 1


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


def test_simulation_failures_are_simulation_errors_not_device_findings():
    with pytest.raises(devicelint.SimulationError, match="ValueError: broken model"):
        devicelint.simulate(CrashingNet(), torch.randn(2, 4))
    in_main = type("ScriptModel", (nn.Module,), {"__module__": "__main__", "forward": lambda self, x: x})
    with pytest.raises(devicelint.SimulationError, match="defined in the __main__ script"):
        devicelint.simulate(in_main(), torch.randn(2))
    unpicklable = PositionalNet()
    unpicklable.callback = lambda: None
    with pytest.raises(devicelint.SimulationError, match="cannot be pickled"):
        devicelint.simulate(unpicklable, torch.randn(2, 4))


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


def test_the_fake_cuda_guard_runs_what_stock_fake_tensors_cannot(monkeypatch):
    from runtime_models import TrainModeNet

    bug_line = line_of("        return self.norm(self.proj(x)) + bias")
    with_guard = devicelint.simulate(TrainModeNet(), torch.randn(8, 4))
    assert [(f.line, f.runtime.op) for f in with_guard] == [(bug_line, "Tensor.add")]
    assert with_guard.unsupported == []  # train-mode BatchNorm ran on fake CUDA

    monkeypatch.setenv("DEVICELINT_FAKE_CUDA_GUARD", "0")
    with pytest.warns(UserWarning) as warned:
        stock = devicelint.simulate(TrainModeNet(), torch.randn(8, 4))
    assert [str(w.message) for w in warned] == [f"devicelint.simulate: {note}" for note in stock.unsupported]
    assert [(f.line, f.runtime.op) for f in stock] == [(bug_line, "Tensor.add")]  # found again in eval mode
    assert stock.unsupported[0].startswith("the fake CUDA device guard is turned off")
    assert "in train mode; simulated again in eval mode" in stock.unsupported[1]
