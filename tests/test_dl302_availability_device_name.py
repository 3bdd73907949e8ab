"""DL302: a device bound to ``torch.device("cuda" if torch.cuda.is_available() else "cpu")`` in a
function handed a model, which it places with that device, in a program that puts work on GPUs
it picks."""

from __future__ import annotations

import textwrap

from conftest import lint


def _lines(source: str) -> list[int]:
    return sorted(
        finding.line
        for finding in lint(textwrap.dedent(source), rule_code="DL302")
        if finding.code == "DL302" and "because a GPU exists" in finding.message
    )


_HELPERS = """
    import torch
    from torch import nn

    def place(obj, where):
        return obj.to(where)

    def profile(net: nn.Module, sample=None, where=None):
        if where is None:
            where = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return place(net, where)(sample)
"""


def test_availability_device_handed_to_a_placing_helper_in_a_program_that_picks_gpus_is_flagged() -> None:
    source = _HELPERS + """
    if __name__ == "__main__":
        last = torch.device("cuda", torch.cuda.device_count() - 1)
        net = nn.Linear(3, 2).to(last)
        profile(net, torch.ones(1, 3, device=last))
    """
    assert _lines(source) == [10]


def test_availability_device_moving_the_model_directly_is_flagged() -> None:
    source = """
    import torch
    from torch import nn

    def inspect_model(net: nn.Module):
        where = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return net.to(where)

    gpu = torch.device("cuda:1")
    inspect_model(nn.Linear(2, 2).to(gpu))
    """
    assert _lines(source) == [6]


def test_a_training_function_choosing_by_availability_alone_stays_silent() -> None:
    # nothing in the program picks a GPU: the availability test is the program's own choice
    source = _HELPERS + """
    if __name__ == "__main__":
        profile(nn.Linear(3, 2), torch.ones(1, 3))
    """
    assert _lines(source) == []


def test_a_device_never_used_to_place_or_a_function_handed_nothing_stays_silent() -> None:
    source = """
    import torch
    from torch import nn

    def report(net: nn.Module):
        where = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        print(where, net)

    def build():
        where = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        return nn.Linear(2, 2).to(where)

    torch.cuda.set_device(torch.cuda.device_count() - 1)
    """
    assert _lines(source) == []


def test_a_plain_object_moving_its_tensor_where_a_gpu_exists_for_handed_tensors_is_flagged() -> None:
    source = """
    import torch

    class Weighting:
        def __init__(self, weights):
            self.w = torch.as_tensor(weights)
            if torch.cuda.is_available():
                self.w = self.w.cuda()

        def __call__(self, scores):
            return (scores * self.w).sum()
    """
    assert _lines(source) == [8]


def test_a_plain_object_whose_gpu_tensor_meets_no_handed_tensor_stays_silent() -> None:
    source = """
    import torch

    class Table:
        def __init__(self, size):
            self.t = torch.arange(size)
            if torch.cuda.is_available():
                self.t = self.t.cuda()

        def total(self):
            return self.t.sum() * 2
    """
    assert _lines(source) == []
