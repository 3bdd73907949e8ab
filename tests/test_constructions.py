"""Objects built by classes the analysis cannot read (devicelint.analysis.constructions): once
the program uses one as a module (`model.eval()`), it is a module on the host, unless something
could have placed it."""

from __future__ import annotations

import pytest

from conftest import lint

DEMO = '''
import argparse
import torch
import pose.models as models
from pixor import PIXOR


def load_model(arch, stacks, checkpoint):
    model = models.__dict__[arch](num_stacks=stacks)
    model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
    model.eval()
    return model


def inference(model, image, device):
    input_tensor = torch.from_numpy(image).float().to(device)
    return model(input_tensor)


def main(args):
    model = load_model(args.arch, args.stacks, args.checkpoint)
    inference(model, args.image, args.device)
    net = PIXOR()
    net.load_state_dict(torch.load(args.weights, map_location=args.device))
    evaluate(net, args.device)


def evaluate(net, device):
    net.eval()
    return net(torch.zeros(1, 3, 8, 8, device=device))
'''


def test_a_module_built_by_an_unread_class_and_never_moved_is_on_the_host():
    findings = [(f.line, f.code) for f in lint(DEMO)]
    assert findings == [(17, "DL201"), (30, "DL201")]
    message = next(f.message for f in lint(DEMO) if f.line == 17)
    assert "never moved since it was built by `models.__dict__[arch]()` at line 9" in message


@pytest.mark.parametrize(
    "build",
    [
        # a factory may move what it builds (detectron2's build_model moves to cfg.MODEL.DEVICE)
        "model = build_model(cfg)",
        # told a device
        "model = Net(cfg, device=device)",
        "model = Net(device)",
        "model = Net('cuda')",
        "model = Net(**kwargs)",
        # moved, or handed to code that may move it, before it shows it is a module
        "model = Net()\nmodel.to(device)",
        "model = Net()\nmodel.setup(device)",
        "model = Net()\ntrainer.prepare(model)",
        # a library whose models place themselves on the accelerator
        "from sentence_transformers import SentenceTransformer\nmodel = SentenceTransformer('all-MiniLM-L6-v2')",
        # built under a default device
        "with torch.device('cuda'):\n    model = Net()",
    ],
)
def test_what_may_have_placed_the_object_keeps_its_device_unknown(build):
    code = f"import torch\nfrom lib import Net, build_model, trainer\ndevice = torch.device('cuda')\n{build}\nmodel.eval()\nout = model(torch.zeros(2, 3, device=device))\n"
    assert [f.code for f in lint(code)] == []


@pytest.mark.parametrize("default", ["torch.device(device)", "torch.device('cuda')", "device"])
def test_a_module_of_the_file_built_under_a_default_device_has_its_parameters_there(default):
    # vLLM's loader builds the model under the target device (`with torch.device(device):`):
    # the parameters its constructor makes are there, also where the device is a parameter
    code = f"""
import torch
from torch import nn


class Resampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Parameter(torch.randn(4, 3))
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        return self.proj(x) + self.query


def load_model(device):
    with {default}:
        model = Resampler()
    return model.eval()


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = load_model(device)
out = model(torch.randn(2, 3, device=device))
"""
    assert [f.code for f in lint(code)] == []


def test_a_module_of_the_file_built_under_the_cpu_default_device_is_on_the_host():
    code = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        return x + self.query


with torch.device("cpu"):
    model = Head()
out = model(torch.randn(2, 3, device="cuda"))
"""
    assert [f.code for f in lint(code)] == ["DL201"]


def test_a_submodule_built_in_a_module_moves_with_the_model():
    code = '''
import torch
from torch import nn
from backbones import Backbone


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.backbone.eval()
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


model = Detector().to("cuda")
out = model(torch.zeros(1, 8, device="cuda"))
'''
    assert [f.code for f in lint(code)] == []
