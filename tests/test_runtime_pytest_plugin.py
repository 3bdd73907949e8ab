"""The pytest plugin, run for real in a separate pytest session (pytester)."""

from __future__ import annotations

import importlib.metadata

import pytest


def _plugin_arguments() -> tuple[str, ...]:
    """pytester's sessions load the plugin through devicelint's ``pytest11`` entry point; where
    devicelint is only on the import path, not installed, there is none, and ``-p`` loads it
    (given both, pytest would refuse the plugin registered twice under two names)."""
    entry_points = importlib.metadata.entry_points()
    group = entry_points.select(group="pytest11") if hasattr(entry_points, "select") else entry_points.get("pytest11", [])
    installed = any(entry.value == "devicelint.runtime.pytest_plugin" for entry in group)
    return () if installed else ("-p", "devicelint.runtime.pytest_plugin")


PLUGIN = _plugin_arguments()

TEST_MODULE = '''
import pytest
import torch
from torch import nn

{header}

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4, device="meta")

    def forward(self, x):
        return self.proj(x)


def test_forgot_to_move_the_input():
    model = nn.Sequential(Head())
    model(torch.randn(2, 4))  # cpu input, meta weights


def test_clean():
    model = nn.Sequential(Head())
    model(torch.randn(2, 4, device="meta"))
'''


def outcome(result) -> dict:
    return {key: value for key, value in result.parseoutcomes().items() if key in ("passed", "failed")}


def test_marker_on_a_module_guards_every_forward(pytester):
    pytester.makepyfile(test_models=TEST_MODULE.format(header="pytestmark = pytest.mark.device_guard"))
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider")
    assert outcome(result) == {"passed": 1, "failed": 1}
    assert "DeviceMismatchError: 0.proj (Linear): input `args[0]` is on cpu, parameter `weight` is on meta" in result.stdout.str()


def test_command_line_option_guards_every_test_and_without_it_torch_fails_alone(pytester):
    pytester.makepyfile(test_models=TEST_MODULE.format(header=""))
    guarded = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "--device-guard")
    assert outcome(guarded) == {"passed": 1, "failed": 1}
    assert "DeviceMismatchError: 0.proj (Linear)" in guarded.stdout.str()
    plain = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider")
    assert outcome(plain) == {"passed": 1, "failed": 1}
    assert "DeviceMismatchError" not in plain.stdout.str()


def test_device_guard_fixture(pytester):
    pytester.makepyfile(
        test_fixture='''
import pytest
import torch
from torch import nn

import devicelint


def test_collects(device_guard):
    model = nn.Sequential(nn.Linear(4, 4, device="meta"))
    guard = device_guard(model, on_mismatch="collect")
    with pytest.raises(RuntimeError):
        model(torch.randn(2, 4))
    assert [f.runtime.module_path for f in guard.findings] == ["0"]


def test_raises(device_guard):
    model = nn.Sequential(nn.Linear(4, 4, device="meta"))
    device_guard(model)
    with pytest.raises(devicelint.DeviceMismatchError):
        model(torch.randn(2, 4))


def test_removed_after_the_test():
    model = nn.Linear(4, 4)
    assert not model._forward_pre_hooks
'''
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider")
    assert outcome(result) == {"passed": 3}


FIRST_FORWARD_MODULE = '''
import pytest
import torch
from torch import nn


class Lookup(nn.Module):
    """One forward, one bug: a plain tensor attribute (left on the CPU by .to()) indexed with
    ids on the model's device. The meta device accepts it; a GPU would not."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.table = torch.randn(10, 4)

    def forward(self, ids):
        return self.proj(self.table[ids])


@pytest.mark.device_guard(ops=True)
def test_only_forward_has_an_op_bug():
    model = Lookup().to("meta")
    model(torch.tensor([1, 2], device="meta"))


@pytest.mark.device_guard
def test_only_forward_has_a_root_bug():
    model = nn.Linear(4, 4, device="meta")
    with pytest.raises(RuntimeError) as raised:
        model(input=torch.randn(2, 4))  # a keyword argument: the root is checked with it
    assert type(raised.value).__name__ == "DeviceMismatchError", raised.value


@pytest.mark.device_guard(ops=True, on_mismatch="collect")
def test_collect_fails_at_the_end_with_every_finding():
    model = Lookup().to("meta")
    for _ in range(2):  # the same mismatches again: each reported once
        with pytest.raises(RuntimeError):  # torch's own error (the lookup's CPU rows meet the meta Linear)
            model(torch.tensor([1, 2], device="meta"))


@pytest.mark.device_guard(ops=True, on_mismatch="collect")
def test_collect_adds_its_list_to_a_test_that_fails_anyway():
    model = Lookup().to("meta")
    model(torch.tensor([1, 2], device="meta"))  # torch's own error ends the test


@pytest.mark.device_guard(ops=True, on_mismatch="warn")
def test_warn_lets_the_test_pass():
    model = Lookup().to("meta")
    with pytest.warns(UserWarning, match="indexes a tensor on cpu"), pytest.raises(RuntimeError):
        model(torch.tensor([1, 2], device="meta"))
'''


def test_the_first_and_only_forward_is_checked(pytester):
    pytester.makepyfile(test_first=FIRST_FORWARD_MODULE)
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider")
    assert outcome(result) == {"passed": 2, "failed": 3}
    output = result.stdout.str()
    assert (
        "E           devicelint.DeviceMismatchError: `Tensor.__getitem__` in Lookup.forward indexes a tensor on cpu "
        "with an index on meta" in output
    )
    assert "test_first.py::test_collect_fails_at_the_end_with_every_finding - Fail" in output
    assert "devicelint.guard found 3 device mismatch(es):" in output
    # collect lists every distinct mismatch once per test, each at the user's line; a test that
    # failed anyway gets the list as a report section
    # counted above the short summary, which pytest prints in full under CI=true and cut to the
    # terminal's width elsewhere
    failures = output.split("short test summary info")[0]
    assert failures.count("test_first.py:16: `Tensor.__getitem__` in Lookup.forward indexes") == 2
    assert failures.count("test_first.py:16: proj (Linear): input `args[0]` is on cpu") == 2
    assert "Captured devicelint call" in output
    assert "register it with `self.register_buffer(\"table\", ...)`" in output


def test_unknown_or_positional_marker_arguments_are_usage_errors(pytester):
    for marker, expected in (
        ("device_guard(op=True)", "unknown argument op; allowed: ops, on_mismatch"),
        ("device_guard(True)", "takes keyword arguments only (ops=..., on_mismatch=...), got True"),
        ("device_guard(on_mismatch='ignore')", "on_mismatch must be one of 'raise', 'warn', 'collect', not 'ignore'"),
        ("device_guard(ops='yes')", "ops must be True or False, not 'yes'"),
    ):
        pytester.makepyfile(test_marker=f"import pytest\n\n@pytest.mark.{marker}\ndef test_it():\n    pass\n")
        result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.USAGE_ERROR, marker
        assert f"ERROR: @pytest.mark.device_guard on test_marker.py::test_it: {expected}" in result.stderr.str()
        assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_the_plugins_list_of_modes_is_the_guards():
    # kept apart so that collecting tests does not import torch; they must not drift
    from devicelint.runtime import guard, pytest_plugin

    assert pytest_plugin._MODES == guard.MODES
