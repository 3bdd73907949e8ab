"""A parameter whose shared numpy/torch method result (`scores.argsort(-1)`) is handed first to a
torch function is a tensor: torch functions refuse numpy arrays."""
from __future__ import annotations

import textwrap

from conftest import lint


def dl202_lines(code: str) -> list[int]:
    return sorted(f.line for f in lint(textwrap.dedent(code)) if f.code == "DL202")


def test_argsort_handed_to_a_torch_function_makes_the_parameter_a_tensor():
    code = """
        import torch

        def ranked_cutoffs(scores):
            order = torch.flip(scores.argsort(-1), [-1])
            ranked = scores[order]
            steps = torch.nonzero(ranked[1:] - ranked[:-1]).flatten()
            return torch.cat((steps, torch.LongTensor([len(ranked) - 1])))
    """
    assert dl202_lines(code) == [8]


def test_numpy_function_of_the_method_result_is_no_evidence():
    code = """
        import numpy as np
        import torch

        def ranked_cutoffs(scores):
            order = np.flip(scores.argsort(-1))
            ranked = scores[order]
            steps = np.nonzero(ranked[1:] - ranked[:-1])[0]
            return torch.cat((torch.as_tensor(steps), torch.LongTensor([len(ranked) - 1])))
    """
    assert dl202_lines(code) == []


def test_arithmetic_with_a_number_handed_to_a_torch_function_makes_the_parameter_a_tensor():
    code = """
        import torch

        def counts_with_start(hits, order):
            hits = hits == 1
            running = torch.cumsum(hits * 1, dim=-1)[order]
            return torch.cat((torch.LongTensor([0]), running))
    """
    assert dl202_lines(code) == [7]


def test_arithmetic_with_a_tensor_or_a_list_is_no_evidence():
    code = """
        import torch

        def draws(p, parts, n):
            mask = torch.bernoulli(p * torch.ones(3))
            joined = torch.cat(parts + [torch.zeros(2)])
            powers = torch.pow(n * 2, torch.arange(3))
            return mask.sum() + joined.sum() + powers.sum() + torch.zeros(3)
    """
    assert dl202_lines(code) == []
