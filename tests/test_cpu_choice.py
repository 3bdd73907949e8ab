"""Which code a program's choice of the CPU governs (devicelint/rules/_cpu_choice.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from devicelint.analysis import walk
from devicelint.rules._cpu_choice import CpuChoices


def _governed(source: str) -> dict[str, bool]:
    """Per top-level function or method name: is it covered by a choice of the CPU?"""
    module = cst.parse_module(textwrap.dedent(source))
    choices = CpuChoices()
    walk.visit(module, choices)
    found: dict[str, bool] = {}

    class Functions(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found[node.name.value] = choices.first_governing(node) is not None

    walk.visit(module, Functions())
    return found


def test_a_choice_in_a_function_governs_what_it_calls_by_name_transitively() -> None:
    governed = _governed(
        """
        import torch
        def load(path):
            return prepare(path)
        def prepare(path):
            return path
        def benchmark():
            return 1
        def main():
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
            load("x")
        """
    )
    assert governed == {"load": True, "prepare": True, "benchmark": False, "main": True}


def test_a_module_level_choice_governs_module_code_its_callees_and_readers_of_its_name() -> None:
    source = """
        import torch
        device = "cuda" if torch.cuda.is_available() else "cpu"
        def reads_device(x):
            return x.to(device)
        def called_at_top():
            return 1
        def unrelated(x):
            return x.cuda()
        def keyword_only(x):
            return torch.zeros(3, device="cuda")
        called_at_top()
        """
    governed = _governed(source)
    assert governed == {"reads_device": True, "called_at_top": True, "unrelated": False, "keyword_only": False}
    module = cst.parse_module(textwrap.dedent(source))
    choices = CpuChoices()
    walk.visit(module, choices)
    assert choices.first_governing(None) is not None


def test_a_choice_in_a_method_governs_its_class_and_the_classes_derived_from_it() -> None:
    governed = _governed(
        """
        import torch
        class Base:
            def __init__(self, ids):
                self.device = torch.device(f"cuda:{ids[0]}") if ids else torch.device("cpu")
        class Train(Base):
            def build(self):
                return 1
        class Other:
            def run(self):
                return 2
        """
    )
    assert governed == {"__init__": True, "build": True, "run": False}


def test_an_if_with_a_device_bound_on_each_branch_is_a_choice_and_a_flag_without_the_cpu_is_not() -> None:
    assert _governed(
        """
        import torch
        def main(gpu):
            if gpu:
                device = "cuda:0"
            else:
                device = "cpu"
        """
    ) == {"main": True}
    assert _governed(
        """
        import torch
        def main(gpu):
            device = "cuda:0" if gpu else "cuda:1"
        """
    ) == {"main": False}
