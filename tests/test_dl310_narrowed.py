"""DL310: a name an isinstance test has narrowed to a Python container has no `.device` and no moves."""
from __future__ import annotations

import textwrap

import pytest

from conftest import lint


def dl310(code: str) -> list[int]:
    return sorted(finding.line for finding in lint(textwrap.dedent(code)) if finding.code == "DL310")


def test_device_of_a_tuple_left_by_an_early_return():
    code = """
        import torch

        def weighted_sum(preds, labels):
            if not isinstance(preds, tuple):
                return (preds - labels).abs().mean()
            weights = torch.linspace(1.0, 0.5, len(preds)).to(preds.device)
            return sum(w * (p - labels).abs().mean() for w, p in zip(weights, preds))
    """
    assert dl310(code) == [7]


def test_move_inside_a_positive_container_test():
    code = """
        import torch

        def to_gpu(batch, device):
            if isinstance(batch, (list, tuple)):
                return batch.cuda()
            return batch.to(device)
    """
    assert dl310(code) == [6]


def test_factory_given_the_device_of_a_list_after_a_raise():
    code = """
        import torch

        def stacked(parts):
            if not isinstance(parts, list):
                raise TypeError("parts must be a list")
            out = torch.zeros(len(parts), 3, device=parts.device)
            return out
    """
    assert dl310(code) == [7]


@pytest.mark.parametrize(
    "code",
    [
        # the element's device, not the tuple's
        """
        import torch

        def weighted_sum(preds, labels):
            if not isinstance(preds, tuple):
                return (preds - labels).abs().mean()
            weights = torch.ones(len(preds)).to(preds[0].device)
            return sum(w * (p - labels).abs().mean() for w, p in zip(weights, preds))
        """,
        # the early exit wraps a tensor into a tuple instead: the name is re-bound
        """
        import torch

        def weighted_sum(preds, labels):
            if not isinstance(preds, tuple):
                preds = (preds,)
            weights = torch.ones(len(preds)).to(preds.device)
            return weights
        """,
        # the guard does not leave the function: both shapes reach the read
        """
        import torch

        def weighted_sum(preds, labels):
            if not isinstance(preds, tuple):
                print("single output")
            return torch.ones(3).to(preds.device)
        """,
        # a tensor type is among the tested types
        """
        import torch

        def move(x, device):
            if isinstance(x, (tuple, torch.Tensor)):
                return x.to(device)
            return x
        """,
        # the move is on the branch for everything that is not a container
        """
        import torch

        def move(x, device):
            if isinstance(x, (list, tuple)):
                return [move(v, device) for v in x]
            return x.to(device)
        """,
    ],
)
def test_narrowing_that_does_not_hold_is_silent(code):
    assert dl310(code) == []
