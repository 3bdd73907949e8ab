"""A list an object keeps (``self.scores = []``) that one method fills in place
(``self.scores.append(y)``) and another reads: the reader sees what the appends of every call
of the filling method put there, so model outputs on the GPU handed to ``add`` reach numpy in
``summary``."""

from conftest import lint

HEAD = '''import numpy as np
import torch
import torch.nn as nn

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
net = nn.Linear(3, 1).to(dev)


class Tracker:
    def __init__(self):
        self.scores = []

'''


def codes(source):
    return sorted((f.line, f.code) for f in lint(source) if f.code.startswith("DL2"))


def test_outputs_appended_by_one_method_reach_numpy_in_another():
    source = HEAD + '''    def push(self, y):
        self.scores.append(y)

    def summary(self):
        return np.stack(self.scores).mean()


def evaluate(batches):
    tr = Tracker()
    for b in batches:
        tr.push(net(b.to(dev)))
    return tr.summary()
'''
    assert codes(source) == [(17, "DL204")]


def test_extend_counts_as_a_fill():
    source = HEAD + '''    def push(self, ys):
        self.scores.extend(ys)

    def summary(self):
        return np.array(self.scores)


def evaluate(batches):
    tr = Tracker()
    for b in batches:
        tr.push([net(b.to(dev))])
    return tr.summary()
'''
    assert codes(source) == [(17, "DL204")]


def test_outputs_brought_to_the_host_at_the_call_stay_silent():
    source = HEAD + '''    def push(self, y):
        self.scores.append(y)

    def summary(self):
        return np.stack(self.scores).mean()


def evaluate(batches):
    tr = Tracker()
    for b in batches:
        tr.push(net(b.to(dev)).detach().cpu())
    return tr.summary()
'''
    assert codes(source) == []


def test_outputs_brought_to_the_host_in_the_filling_method_stay_silent():
    source = HEAD + '''    def push(self, y):
        self.scores.append(y.detach().cpu())

    def reset(self):
        self.scores = []

    def summary(self):
        return np.stack(self.scores).mean()


def evaluate(batches):
    tr = Tracker()
    for b in batches:
        tr.push(net(b.to(dev)))
    out = tr.summary()
    tr.reset()
    return out
'''
    assert codes(source) == []


def test_another_method_storing_something_unknown_keeps_it_silent():
    source = HEAD + '''    def push(self, y):
        self.scores.append(y)

    def load(self, saved):
        self.scores = saved

    def summary(self):
        return np.stack(self.scores).mean()


def evaluate(batches, saved):
    tr = Tracker()
    tr.load(saved)
    for b in batches:
        tr.push(net(b.to(dev)))
    return tr.summary()
'''
    assert codes(source) == []


def test_a_module_list_filled_by_another_method_stays_what_init_built():
    # `self.blocks.append(layer)` on a ModuleList changes what it holds, not which object it is:
    # the other methods still see the ModuleList, on the model's device
    source = '''import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(2, 2)])

    def add_block(self):
        self.blocks.append(nn.Linear(2, 2))

    def forward(self, x):
        h = torch.randn(3, 2)
        for b in self.blocks:
            h = b(h)
        return x + h


net = Stack().cuda()
net.add_block()
print(net(torch.randn(3, 2).cuda()))
'''
    assert [(line, code) for line, code in codes(source) if code == "DL202"] == [(14, "DL202")]
