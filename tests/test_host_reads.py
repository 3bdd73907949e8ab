"""A module input that forward only reads on the host (sizes, counts turned into Python numbers)
may stay on the CPU while the model is on a GPU: DL201 and DL202 leave such a call alone, and
still report an input that forward computes with."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from devicelint.analysis.host_reads import HostReads

from conftest import line_codes


def _methods(source: str) -> dict[str, cst.FunctionDef]:
    module = cst.parse_module(textwrap.dedent(source))
    found: dict[str, cst.FunctionDef] = {}
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            for item in statement.body.body:
                if isinstance(item, cst.FunctionDef):
                    found[item.name.value] = item
    return found


def _host_only(source: str, parameter: str, method: str = "forward") -> bool:
    methods = _methods(source)
    return HostReads().read_only_on_host(methods[method], parameter, methods.get)


HEADER = "class M:\n"


@pytest.mark.parametrize(
    "body",
    [
        # turned into Python numbers at once
        "    def forward(self, x, sizes):\n        h, w = sizes.tolist()\n        return x[:, : h * w]\n",
        # a local computed from it only, then read as a number and as a slice bound
        "    def forward(self, x, sizes):\n        n = sizes[:, 0] * sizes[:, 1]\n        longest = int(n.max())\n"
        "        mask = x.new_zeros(x.shape[0], longest)\n        for i in range(x.shape[0]):\n"
        "            mask[i, n[i]:] = 1\n        return x[:, :longest] * mask\n",
        # a condition, and a hand-on to another method that reads it the same way
        "    def forward(self, x, sizes):\n        if sizes.numel() == 0:\n            return x\n"
        "        self.grow(sizes)\n        return x\n"
        "    def grow(self, sizes):\n        self.limit = max(self.limit, int(sizes.max()))\n",
        # each row read as numbers
        "    def forward(self, x, sizes):\n        out = []\n        for row in sizes:\n"
        "            out.append(x[: row[0].item()])\n        return out\n",
    ],
)
def test_parameters_read_on_the_host_only(body):
    assert _host_only(HEADER + body, "sizes")


@pytest.mark.parametrize(
    "body",
    [
        # it meets the data
        "    def forward(self, x, scale):\n        return x * scale\n",
        # a local computed from it meets the data
        "    def forward(self, x, scale):\n        s = scale.view(-1, 1)\n        return x + s\n",
        # handed to a submodule or a torch function
        "    def forward(self, x, mask):\n        return self.attn(x, key_padding_mask=mask)\n",
        "    def forward(self, x, w):\n        return torch.matmul(x, w)\n",
        # returned, or kept on the object
        "    def forward(self, x, sizes):\n        return x, sizes.long()\n",
        "    def forward(self, x, sizes):\n        self.sizes = sizes\n        return x\n",
        # indexed by a tensor that may be on the GPU
        "    def forward(self, x, table):\n        return table[x.argmax(1)].tolist()\n",
        # moved: then it is no longer a host read (another check owns moved inputs)
        "    def forward(self, x, sizes):\n        return x[: int(sizes.to(x.device).sum())]\n",
        # handed to another method that computes with it
        "    def forward(self, x, scale):\n        return self.apply_scale(x, scale)\n"
        "    def apply_scale(self, x, scale):\n        return x * scale\n",
        # named inside a nested function: not followed
        "    def forward(self, x, sizes):\n        def pick(i):\n            return sizes[i]\n        return pick(0)\n",
    ],
)
def test_parameters_that_may_meet_other_tensors(body):
    assert not _host_only(HEADER + body, body.split("(self, ")[1].split(")")[0].split(", ")[-1])


MODEL = '''\
import torch
from torch import nn


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, sizes):
        longest = int((sizes[:, 0] * sizes[:, 1]).max())
        return self.proj(x[:, :longest])


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, weights):
        return self.proj(x) * weights


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.randn(2, 6, 8, device=device)
    pool = Pool().to(device)
    pool(x, torch.tensor([[2, 3], [1, 2]]))
    scaled = Scaled().to(device)
    scaled(x, torch.ones(8))
'''


def test_a_host_read_input_is_left_alone_and_a_computed_one_is_reported():
    found = line_codes(MODEL)
    # the sizes Pool reads on the host: no finding on line 28; the weights Scaled multiplies
    # its output by: the CPU factory is reported
    assert (28, "DL202") not in found and (28, "DL201") not in found
    assert found == [(30, "DL202")]


def test_the_same_inputs_bound_to_locals_first():
    source = MODEL.replace("pool(x, torch.tensor([[2, 3], [1, 2]]))", "sizes = torch.tensor([[2, 3], [1, 2]])\n    pool(x, sizes)")
    source = source.replace("scaled(x, torch.ones(8))", "weights = torch.ones(8)\n    scaled(x, weights)")
    found = line_codes(source)
    # sizes (line 28, handed in at 29) stay quiet; the weights' factory (line 31) is reported
    assert found == [(31, "DL202")]


LOADER = '''\
import torch
from torch import nn
from torch.utils.data import DataLoader


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, sizes):
        return self.proj(x[:, : int(sizes.max())])


def train(dataset, device):
    model = Pool().to(device)
    for x, sizes in DataLoader(dataset, batch_size=4):
        model(x.to(device), sizes)
        model(x, sizes)
'''


def test_dl203_leaves_a_batch_entry_read_on_the_host_and_reports_the_data():
    # line 18: the sizes stay on the CPU, rightly; line 19: the data itself was never moved
    assert line_codes(LOADER) == [(19, "DL203")]
