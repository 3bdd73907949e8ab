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


# --- a body on its header's line returns, binds and chooses as on lines of its own ---------------

_HELPER_USE = """
import torch
import torch.nn as nn

{helper}

def main(gpu):
    model = {model}
    batch = place(torch.randn(8, 4), gpu)
    return model(batch)
"""

_ONE_LINE_HELPERS = (
    "def place(x, gpu): return x.cuda()",
    "def place(x, gpu):\n    if gpu: return x.cuda()\n    else: return x",
    "def place(x, gpu):\n    with torch.no_grad(): return x.cuda()",
    "def place(x, gpu):\n    if not torch.is_tensor(x): raise TypeError(x)\n    else: x = x.cuda(); return x",
)


def test_a_helper_whose_return_is_on_a_header_line_returns_its_value():
    for helper in _ONE_LINE_HELPERS:
        source = _HELPER_USE.format(helper=helper, model="nn.Linear(4, 2)")
        assert [f.code for f in lint(source)] == ["DL201"], helper


def test_a_helper_whose_return_is_on_a_header_line_stays_quiet_beside_a_moved_model():
    for helper in _ONE_LINE_HELPERS[:1] + _ONE_LINE_HELPERS[2:]:
        source = _HELPER_USE.format(helper=helper, model="nn.Linear(4, 2).cuda()")
        assert lint(source) == [], helper
    # the helper that may hand the host tensor back: only the flag says, and it is not known
    source = _HELPER_USE.format(helper=_ONE_LINE_HELPERS[1], model="nn.Linear(4, 2)")
    assert [f.code for f in lint(source)] == ["DL201"]


def test_an_attribute_rebound_by_a_one_line_method_is_what_the_method_left():
    one_line = """
import torch

class Holder:
    def __init__(self): self.table = torch.zeros(3); self.count = 0
    def to_gpu(self): self.table = self.table.cuda()
    def tick(self): self.count += 1

def main():
    h = Holder()
    kept = h.table
    h.tick()
    still = h.table
    h.to_gpu()
    moved = h.table
    return kept, still, moved
"""
    multi = (
        one_line.replace("def __init__(self): self", "def __init__(self):\n        self")
        .replace("def to_gpu(self): self", "def to_gpu(self):\n        self")
        .replace("def tick(self): self", "def tick(self):\n        self")
    )
    assert multi.count("\n        self.") == 3
    seen = []
    for source in (one_line, multi):
        state = function_state(analyse(source), "main")
        seen.append([(place(state[name]), state[name].kind) for name in ("kept", "still", "moved")])
    assert seen[0] == seen[1]
    assert seen[0][2][0] == "accel"


def test_a_one_line_method_that_moves_an_attribute_leaves_no_stale_host_tensor():
    source = """
import torch
import torch.nn as nn

class Holder:
    def __init__(self):
        self.table = torch.zeros(4)
    def to_gpu(self): self.table = self.table.cuda()

def main():
    model = nn.Linear(4, 2).cuda()
    h = Holder()
    h.to_gpu()
    return model(h.table)
"""
    assert lint(source) == []
    # as with the method on lines of its own
    assert lint(source.replace("def to_gpu(self): self", "def to_gpu(self):\n        self")) == []
    # a class that never moves it: the host tensor meets the model
    never = source.replace("    def to_gpu(self): self.table = self.table.cuda()\n", "").replace("    h.to_gpu()\n", "")
    assert [f.code for f in lint(never)] == ["DL202"]


def test_a_device_choice_written_on_header_lines_is_a_choice():
    multi = """
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--cuda", action="store_true")
args = parser.parse_args()
if args.cuda:
    device = "cuda"
else:
    device = "cpu"
model = nn.Linear(4, 2).to(device)
x = torch.randn(3, 4).cuda()
print(model(x))
"""
    one_line = multi.replace('if args.cuda:\n    device = "cuda"\nelse:\n    device = "cpu"', 'if args.cuda: device = "cuda"\nelse: device = "cpu"')
    assert one_line != multi
    assert [(f.code, f.line) for f in lint(multi)] == [("DL302", 14)]
    assert [(f.code, f.line) for f in lint(one_line)] == [("DL302", 12)]
    # moved with the chosen device, the input is quiet in both forms
    for source in (multi, one_line):
        assert lint(source.replace("torch.randn(3, 4).cuda()", "torch.randn(3, 4).to(device)")) == []
