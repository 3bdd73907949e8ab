"""DL301: a bare ``torch.load`` on the GPU branch of an ``if`` whose other branch maps the same
file to the host is fine when that branch runs on the current GPU, but not when it moves the
model to a GPU the code picks by index: the checkpoint's tensors land on the saving GPU."""

from __future__ import annotations

import textwrap

from conftest import lint

_LOADER = """
    import argparse
    import torch
    from torch import nn

    def restore(net, path, gpu):
        if gpu >= 0:
            state = torch.load(path)
        else:
            state = torch.load(path, map_location="cpu")
        net.load_state_dict(state)
        if gpu >= 0:
            net = net.cuda({moved})
        return net

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--gpu", type=int, default=-1)
        args = parser.parse_args()
        restore(nn.Linear(2, 2), "w.pt", args.gpu)
"""


def _dl301(moved: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_LOADER.replace("{moved}", moved))) if f.code == "DL301"]


def test_the_gpu_branch_of_a_picked_gpu_is_reported():
    assert _dl301("gpu") == [8]


def test_the_gpu_branch_on_the_current_gpu_is_silent():
    assert _dl301("") == []
