"""DL301 on a ``map_location`` that names CUDA itself, in a program that also runs without a GPU."""

from __future__ import annotations

import pytest

from devicelint.fixer import apply_fixes

from conftest import lint

CHOOSES = "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"


def lines(code: str) -> list[int]:
    return sorted(f.line for f in lint(code, rule_code="DL301") if f.code == "DL301")


@pytest.mark.parametrize(
    "location",
    ["'cuda'", "'cuda:1'", "torch.device('cuda:0')", "torch.device('cuda', 0)", "{'cpu': 'cuda:0'}", "lambda s, loc: s.cuda(0)"],
)
def test_a_cuda_literal_is_flagged(location):
    assert lines(CHOOSES + f"state = torch.load('m.pt', map_location={location})\n") == [3]


@pytest.mark.parametrize(
    "location",
    ["'cpu'", "device", "f'cuda:{rank}'", "{'cuda:0': 'cpu'}", "lambda s, loc: s.cuda(args.gpu)", "'mps'", "'cuda' if use_gpu else 'cpu'"],
)
def test_a_host_or_configured_location_is_left_alone(location):
    assert lines(CHOOSES + f"state = torch.load('m.pt', map_location={location})\n") == []


def test_a_program_that_never_asks_for_its_device_is_left_alone():
    assert lines("import torch\nstate = torch.load('m.pt', map_location='cuda:0')\n") == []


def test_guards_decorators_and_device_tests_keep_the_load_on_a_gpu_only_path():
    code = CHOOSES + (
        "import unittest\n"
        "def resume(path):\n    assert torch.cuda.is_available()\n    return torch.load(path, map_location='cuda')\n"
        "def main(path):\n    if not torch.cuda.is_available():\n        sys.exit('needs a GPU')\n"
        "    return torch.load(path, map_location='cuda')\n"
        "@unittest.skipIf(not torch.cuda.is_available(), 'no GPU')\n"
        "class GpuTest(unittest.TestCase):\n    def test_load(self):\n        torch.load('m.pt', map_location='cuda')\n"
        "def poll(path, args):\n    while args.gpu_ready:\n        torch.load(path, map_location='cuda')\n"
        "def later(path):\n    return torch.load(path, map_location='cuda')  # no guard of its own\n"
    )
    assert lines(code) == [code.splitlines().index("    return torch.load(path, map_location='cuda')  # no guard of its own") + 1]


def test_a_condition_that_does_not_ask_about_the_device_is_no_guard():
    code = CHOOSES + "def load(path, args):\n    if args.resume:\n        return torch.load(path, map_location='cuda:0')\n"
    assert lines(code) == [5]


def test_a_file_written_for_cuda_alone_is_left_alone():
    code = CHOOSES + "stream = torch.cuda.Stream()\nstate = torch.load('m.pt', map_location='cuda:0')\n"
    assert lines(code) == []


def test_the_fix_maps_to_the_runs_device_safely():
    code = CHOOSES + "state = torch.load('m.pt', map_location=torch.device('cuda:0'))\n"
    fixed, applied = apply_fixes(code, lint(code, rule_code="DL301"), unsafe=False)
    assert applied == 1
    assert fixed == CHOOSES + "state = torch.load('m.pt', map_location=device)\n"
