"""The pytest plugin, run for real in a separate pytest session (pytester)."""

from __future__ import annotations

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
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert outcome(result) == {"passed": 1, "failed": 1}
    assert "DeviceMismatchError: 0.proj (Linear): input `args[0]` is on cpu, parameter `weight` is on meta" in result.stdout.str()


def test_command_line_option_guards_every_test_and_without_it_torch_fails_alone(pytester):
    pytester.makepyfile(test_models=TEST_MODULE.format(header=""))
    guarded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--device-guard")
    assert outcome(guarded) == {"passed": 1, "failed": 1}
    assert "DeviceMismatchError: 0.proj (Linear)" in guarded.stdout.str()
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
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
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert outcome(result) == {"passed": 3}
