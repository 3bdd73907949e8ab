"""A block written on its header's line (``if use_gpu: x = x.cuda()``, ``for i in r: y = f(y)``)
runs as the same statements on lines of their own would: libcst keeps its small statements
directly in a SimpleStatementSuite, and they move, bind and leave the block just the same."""

from __future__ import annotations

from conftest import lint
from test_analysis import analyse, function_state, place


def test_a_move_on_the_header_line_of_an_if_or_a_loop_is_seen():
    analyzer = analyse(
        """
import torch

use_gpu = torch.cuda.is_available()

def step():
    a = torch.zeros(3)
    if use_gpu: a = a.cuda()
    b = torch.ones(2)
    for _ in range(3): b = b.to("cuda")
    c = torch.ones(2)
    if use_gpu:
        c = c.cuda()
    return a, b, c
"""
    )
    state = function_state(analyzer, "step")
    assert place(state["a"]) == place(state["c"]) == "accel"
    assert state["a"].device == state["c"].device and state["a"].device.also_on_host
    assert place(state["b"]) == "accel"


def test_a_jump_on_the_header_line_leaves_the_block():
    analyzer = analyse(
        """
import torch

use_gpu = torch.cuda.is_available()

def pick():
    out = torch.zeros(2)
    if use_gpu: out = out.cuda(); return out
    return out
"""
    )
    # the arm that moves also returns: what reaches the last line is the host tensor
    assert place(function_state(analyzer, "pick")["out"]) == "cpu"


_CONFIG_FLAG = """
import argparse
import torch
import torch.nn as nn

{config}


class Agent:
    def __init__(self):
        self.policy = nn.Linear(6, 2)
{init_move}

    def act(self, observation):
        observation = torch.FloatTensor(observation)
{move}
        return self.policy(observation)
"""

_CONFIGS = (
    ("settings = argparse.Namespace(gpu=torch.cuda.is_available(), gamma=0.9)", "settings.gpu"),
    (
        "class AttrDict(dict):\n    def __getattr__(self, key):\n        return self[key]\n\n"
        "settings = AttrDict({'gamma': 0.9, 'gpu': torch.cuda.is_available()})",
        "settings.gpu",
    ),
    ("on_gpu = torch.cuda.is_available()", "on_gpu"),
)


def test_an_input_moved_under_the_flag_that_moved_the_module_is_quiet():
    # the module moved in __init__ and the input moved in another method under one test of
    # the same module-level flag: on every run both or neither are on the GPU
    for config, flag in _CONFIGS:
        for init_move, move in (
            (f"        if {flag}:\n            self.policy.cuda()", f"        if {flag}: observation = observation.cuda()"),
            (f"        if {flag}: self.policy.cuda()", f"        if {flag}: observation = observation.contiguous().cuda()"),
            (f"        if {flag}: self.policy.cuda()", f"        if {flag}:\n            observation = observation.cuda()"),
        ):
            source = _CONFIG_FLAG.format(config=config, init_move=init_move, move=move)
            assert [f for f in lint(source) if f.code == "DL202"] == [], (config, init_move, move)


def test_an_input_never_moved_beside_a_module_moved_under_a_flag_is_reported():
    for config, flag in _CONFIGS:
        source = _CONFIG_FLAG.format(config=config, init_move=f"        if {flag}: self.policy.cuda()", move="        pass")
        assert [f.code for f in lint(source) if f.code in ("DL201", "DL202")] == ["DL202"], config


def test_a_module_moved_on_the_header_line_meets_a_host_batch():
    source = """
import torch
import torch.nn as nn

class Critic:
    def __init__(self, gpu):
        self.value = nn.Linear(6, 1)
        if gpu: self.value = self.value.cuda()

    def score(self, rows):
        batch = torch.randn(len(rows), 6)
        return self.value(batch)
"""
    assert "DL202" in [f.code for f in lint(source)]
