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
