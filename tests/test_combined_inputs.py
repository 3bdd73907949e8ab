"""combined_inputs: which parameters a body combines with one another as tensors."""

import libcst as cst

from devicelint.analysis.combined_inputs import combined_parameter_pairs


def _pairs(code: str) -> set[tuple[str, str]]:
    function = cst.parse_module(code).body[0]
    assert isinstance(function, cst.FunctionDef)
    return set(combined_parameter_pairs(function, skip_first=True))


def test_a_loss_meets_its_target_with_what_it_made_of_the_predictions():
    pairs = _pairs(
        "def forward(self, predict, target):\n    x1, x2 = predict\n"
        "    return self.ce(self.similarities(x1, x2), target)\n"
    )
    assert pairs == {("predict", "target"), ("target", "predict")}


def test_operators_comparisons_and_indices_combine():
    assert ("a", "b") in _pairs("def f(self, a, b):\n    return a * b\n")
    assert ("a", "b") in _pairs("def f(self, a, b):\n    return (a == b).float()\n")
    assert ("a", "b") in _pairs("def f(self, a, b):\n    return a[b]\n")
    assert ("a", "b") in _pairs("def f(self, a, b):\n    total = a.sum()\n    total += b\n    return total\n")


def test_shapes_devices_and_moves_combine_nothing():
    assert _pairs("def f(self, a, b):\n    return b.view(a.size(0), -1), a\n") == set()
    assert _pairs("def f(self, a, b):\n    return torch.zeros(a.shape[0], device=b.device) + 1\n") == set()
    assert _pairs("def f(self, a, b):\n    b = b.to(a.device)\n    return len(a) + b.item()\n") == set()
    assert _pairs("def f(self, a, b):\n    return a.float(), b.cpu() + 1\n") == set()


def test_self_is_not_an_input():
    assert _pairs("def f(self, a):\n    return self.w * a\n") == set()
