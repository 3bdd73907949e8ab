"""DL301 through checkpoint loaders: a function (of the file, of the project, or mmcv's and
mmengine's) whose ``torch.load`` takes its ``map_location`` from a parameter, called so that
the parameter is None; and ``torch.load`` given a ``map_location`` that is None."""

from __future__ import annotations

import libcst as cst
import pytest

from devicelint.analysis.checkpoint_loads import find_loader
from devicelint.analysis.values import Kind, none_on_one_arm
from devicelint.fixer import apply_fixes

from conftest import lint
from test_analysis import analyse

CHOOSES = "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
LOADER = "def _load(filename, map_location=None):\n    return torch.load(filename, map_location=map_location)\n"


def findings(code: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.message) for f in lint(code, rule_code="DL301") if f.code == "DL301")


def lines(code: str) -> list[int]:
    return [line for line, _ in findings(code)]


def _function(code: str) -> cst.FunctionDef:
    statement = cst.parse_module(code).body[0]
    assert isinstance(statement, cst.FunctionDef)
    return statement


def _torch_load(node: cst.BaseExpression) -> str | None:
    return "torch.load" if cst.Module([]).code_for_node(node) == "torch.load" else None


@pytest.mark.parametrize(
    "code, path, location, defaults_to_none",
    [
        ("def f(p, map_location=None):\n    return torch.load(p, map_location=map_location)\n", "p", "map_location", True),
        ("def f(p, loc):\n    return torch.load(p, loc)\n", "p", "loc", False),
        ("def f(p, loc='cpu'):\n    return torch.load(p, map_location=loc)\n", "p", "loc", False),
        ("def f(p):\n    return torch.load(p)\n", "p", None, False),
    ],
)
def test_a_loader_is_summarised_by_its_path_and_location_parameters(code, path, location, defaults_to_none):
    loader = find_loader(_function(code), _torch_load)
    assert loader is not None
    assert (loader.path_parameter, loader.location_parameter, loader.location_defaults_to_none) == (path, location, defaults_to_none)


@pytest.mark.parametrize(
    "code",
    [
        # the body decides the location itself
        "def f(p, map_location=None):\n    map_location = map_location or 'cpu'\n    return torch.load(p, map_location=map_location)\n",
        # the location is not a parameter, nor the path
        "def f(p, dev):\n    return torch.load(p, map_location=dev.location)\n",
        "def f(name):\n    return torch.load(name + '.pt', map_location='cpu')\n",
        # keyword arguments may carry a map_location
        "def f(p, **kwargs):\n    return torch.load(p, **kwargs)\n",
    ],
)
def test_a_function_that_decides_its_location_is_no_loader(code):
    assert find_loader(_function(code), _torch_load) is None


def test_a_conditional_expression_with_a_none_arm_says_where_none_is_chosen():
    analyzer = analyse("import torch\nlocation = 'cpu' if device == 'cpu' else None\n")
    value = analyzer.lookup("location", analyzer.module_state)
    arm = none_on_one_arm(value)
    assert value.kind == Kind.UNKNOWN and arm is not None
    assert not arm.none_when_test_holds
    assert cst.Module([]).code_for_node(arm.none_arm) == "None"


def test_a_loader_left_at_its_none_default_is_a_load_without_map_location():
    code = CHOOSES + LOADER + "state = _load('ckpt.pt')\n"
    [(line, message)] = findings(code)
    assert line == 5
    assert "leaves `map_location` at its default, None" in message and "line 4" in message


@pytest.mark.parametrize("call", ["_load('ckpt.pt', None)", "_load('ckpt.pt', map_location=None)"])
def test_a_loader_handed_none_is_a_load_without_map_location_and_the_fix_maps_it(call):
    code = CHOOSES + LOADER + f"state = {call}\n"
    assert lines(code) == [5]
    fixed, applied = apply_fixes(code, lint(code, rule_code="DL301"))
    assert applied == 1
    assert fixed.endswith(f"state = {call.replace('None', 'device')}\n")
    assert lines(fixed) == []


@pytest.mark.parametrize("call", ["_load('ckpt.pt', 'cpu')", "_load('ckpt.pt', map_location=device)", "_load('ckpt.pt', *rest)"])
def test_a_loader_given_a_location_is_left_alone(call):
    assert lines(CHOOSES + LOADER + f"state = {call}\n") == []


def test_a_location_none_on_one_arm_is_reported_at_the_call_and_where_none_is_chosen():
    code = CHOOSES + LOADER + "def restore(path, gpu):\n    loc = None if gpu else 'cpu'\n    return _load(path, map_location=loc)\n"
    reported = findings(code)
    assert [line for line, _ in reported] == [6, 7]
    assert "`loc` is None where `gpu` holds" in reported[0][1] and "(line 7)" in reported[0][1]
    assert "is given `loc` as `map_location`" in reported[1][1] and "(line 6)" in reported[1][1]


def test_the_loaders_own_load_is_not_reported_for_its_callers_location():
    # the finding is at the call that leaves the location None, not at the loader's torch.load
    code = CHOOSES + LOADER + "def restore(path, gpu):\n    return _load(path, None if gpu else 'cpu')\n"
    assert lines(code) == [6]


def test_a_loader_call_goes_through_the_conditions_of_a_load():
    # a program that never asks for its device runs where its checkpoints were made
    assert lines("import torch\n" + LOADER + "state = _load('ckpt.pt')\n") == []
    # the same run has just written what it loads
    code = CHOOSES + LOADER + "def train(model, path):\n    torch.save(model.state_dict(), path)\n    return _load(path)\n"
    assert lines(code) == []
    # a model's own loading method: its caller places it, whether or not the program asks
    code = "import torch\nimport torch.nn as nn\n" + LOADER + "class Net(nn.Module):\n    def restore(self, path):\n        self.load_state_dict(_load(path))\n"
    assert lines(code) == [7]


def test_torch_load_given_none_is_a_load_without_map_location():
    assert lines(CHOOSES + "state = torch.load('ckpt.pt', map_location=None)\n") == [3]
    assert lines(CHOOSES + "state = torch.load('ckpt.pt', None)\n") == [3]
    assert lines("import torch\nstate = torch.load('ckpt.pt', map_location=None)\n") == []


@pytest.mark.parametrize(
    "imported, call",
    [
        ("from mmcv.runner import load_checkpoint", "load_checkpoint(model, 'det.pth', strict=False)"),
        ("from mmcv.runner.checkpoint import _load_checkpoint", "_load_checkpoint('det.pth')"),
        ("from mmengine.runner import load_checkpoint", "load_checkpoint(model, 'det.pth', None)"),
        ("from mmengine.runner.checkpoint import _load_checkpoint", "_load_checkpoint(filename='det.pth', map_location=None)"),
    ],
)
def test_openmmlab_loaders_default_to_no_map_location(imported, call):
    assert lines(CHOOSES + imported + "\n" + call + "\n") == [4]


@pytest.mark.parametrize(
    "imported, call",
    [
        ("from mmcv.runner import load_checkpoint", "load_checkpoint(model, 'det.pth', 'cpu')"),
        ("from mmengine.runner import load_checkpoint", "load_checkpoint(model, 'det.pth', map_location=device)"),
        # another library's function of the same name is not known to load anything
        ("from detectron2.checkpoint import load_checkpoint", "load_checkpoint(model, 'det.pth')"),
    ],
)
def test_openmmlab_loaders_given_a_location_or_other_libraries_are_left_alone(imported, call):
    assert lines(CHOOSES + imported + "\n" + call + "\n") == []
