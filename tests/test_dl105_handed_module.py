"""DL105 and a module the constructor was handed, kept in a one-element list: LoRA-style wrappers
patch a layer of another model and keep it this way on purpose, so that it is not registered a
second time. A list of modules built here, or of one built here, is still reported."""

from __future__ import annotations

from conftest import line_codes


def _dl105(code):
    return sorted(line for line, code_ in line_codes(code) if code_ == "DL105")


HEADER = "import torch.nn as nn\n"


def test_one_handed_module_in_a_list_is_left_alone():
    code = HEADER + (
        "class Adapter(nn.Module):\n"
        "    def __init__(self, patched: nn.Module, rank=4):\n"
        "        super().__init__()\n"
        "        self.patched = [patched]\n"
        "        self.kept = (patched,)\n"
    )
    assert _dl105(code) == []


def test_modules_built_here_are_still_reported():
    code = HEADER + (
        "class Net(nn.Module):\n"  # 2
        "    def __init__(self, handed: nn.Module):\n"  # 3
        "        super().__init__()\n"  # 4
        "        local = nn.Linear(2, 2)\n"  # 5
        "        self.one_local = [local]\n"  # 6
        "        self.fresh = [nn.Linear(2, 2)]\n"  # 7
        "        self.mixed = [handed, nn.Linear(2, 2)]\n"  # 8
    )
    assert _dl105(code) == [6, 7, 8]
