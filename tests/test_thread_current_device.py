"""DL302: torch.cuda.set_device selects the GPU of the calling thread only; an index-less
"cuda" device used in a function another thread runs means GPU 0 there."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint

_PROGRAM = """
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
import torch

gpu = int(sys.argv[1])
torch.cuda.set_device(gpu)
dev = {device}
net = torch.nn.Linear(8, 2).to(dev)

def load(rows):
    return torch.tensor(rows).to(dev)

pool = ThreadPoolExecutor(max_workers=2)
{start}
"""


def findings(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code), "example.py", "DL302") if f.code == "DL302")


@pytest.mark.parametrize(
    "start",
    [
        "batch = pool.submit(load, [[1.0] * 8]).result()",
        "batches = list(pool.map(load, [[[1.0] * 8]]))",
        "threading.Thread(target=load, args=([[1.0] * 8],)).start()",
    ],
)
def test_index_less_cuda_in_a_thread_after_set_device(start):
    assert findings(_PROGRAM.format(device='torch.device("cuda")', start=start)) == [9]


@pytest.mark.parametrize(
    "device, start",
    [
        # the GPU named: the same in every thread
        ('torch.device("cuda", gpu)', "batch = pool.submit(load, [[1.0] * 8]).result()"),
        ('torch.device(f"cuda:{gpu}")', "batch = pool.submit(load, [[1.0] * 8]).result()"),
        # no thread places with it
        ('torch.device("cuda")', "batch = load([[1.0] * 8])"),
    ],
)
def test_named_gpu_or_no_thread_is_silent(device, start):
    assert findings(_PROGRAM.format(device=device, start=start)) == []


def test_without_set_device_every_thread_uses_the_same_gpu():
    code = _PROGRAM.format(device='torch.device("cuda")', start="batch = pool.submit(load, [[1.0] * 8]).result()")
    assert findings(code.replace("torch.cuda.set_device(gpu)", "pass")) == []
