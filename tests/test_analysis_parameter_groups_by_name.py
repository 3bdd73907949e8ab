"""Optimizer parameter groups built one parameter at a time, and a model rewrapped for
DataParallel before it is moved.

- ``for name, p in model.named_parameters()`` (also through ``dict(...).items()``) draws the
  module's own parameters; a group ``{"params": [p], "lr": ...}`` of them, collected with
  ``append`` or ``groups += [...]``, optimizes that module's parameters.
- ``a + b`` / ``a += b`` of two lists is a list of the elements of both (as ``extend``).
- ``model = nn.DataParallel(model)`` keeps the same module (and its parameters) inside the
  wrapper: moving the wrapper moves what the optimizer holds.
"""

from __future__ import annotations

import textwrap

from conftest import lint


def _codes(code: str, rule: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(code)) if f.code == rule]


_GROUPS = """
    import torch
    from torch import nn

    def resume(checkpoint, base_lr):
        encoder = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        groups = []
        for pname, weight in {loop}:
            if pname.endswith("bias"):
                groups{add} {{"params": [weight], "lr": base_lr * 2}}{close}
            else:
                groups{add} {{"params": [weight], "lr": base_lr}}{close}
        sgd = torch.optim.SGD(groups, momentum=0.5)
        sgd.load_state_dict(checkpoint)
        {move}
        return encoder, sgd
"""


def _groups(loop: str, add: str, move: str = "encoder.cuda()") -> list[int]:
    close = "]" if add.endswith("[") else ")"
    return _codes(_GROUPS.format(loop=loop, add=add, close=close, move=move), "DL407")


def test_groups_appended_from_named_parameters_are_the_models():
    assert _groups("encoder.named_parameters()", ".append(") == [13]


def test_groups_concatenated_with_plus_are_the_models():
    assert _groups("encoder.named_parameters()", " = groups + [") == [13]


def test_groups_extended_with_plus_equals_through_dict_items():
    assert _groups("dict(encoder.named_parameters()).items()", " += [") == [13]


def test_groups_of_a_model_moved_first_are_silent():
    code = _GROUPS.format(loop="encoder.named_parameters()", add=" += [", close="]", move="pass")
    code = code.replace("groups = []", "encoder.cuda()\n        groups = []")
    assert _codes(code, "DL407") == []


def test_groups_of_another_models_parameters_are_silent():
    code = _GROUPS.format(loop="nn.Linear(4, 4).named_parameters()", add=" += [", close="]", move="encoder.cuda()")
    assert _codes(code, "DL407") == []


_WRAPPED = """
    import torch
    from torch import nn

    def restart(state, several_gpus):
        head = nn.Linear(8, 2)
        adam = torch.optim.Adam(head.parameters())
        adam.load_state_dict(state)
        if several_gpus:
            {wrap}
        {move}
        return head, adam
"""


def test_a_model_rewrapped_in_data_parallel_then_moved_keeps_its_optimizer():
    assert _codes(_WRAPPED.format(wrap="head = nn.DataParallel(head)", move="head.cuda()"), "DL407") == [7]


def test_a_wrapper_bound_to_another_name_then_moved_keeps_its_optimizer():
    code = _WRAPPED.format(wrap="pass", move="replicated = nn.DataParallel(head)\n        replicated.to('cuda')")
    assert _codes(code, "DL407") == [7]


def test_a_name_rebound_to_an_unrelated_model_stays_silent():
    code = _WRAPPED.format(wrap="head = nn.DataParallel(nn.Linear(8, 2))", move="head.cuda()")
    assert _codes(code.replace("if several_gpus:\n            ", ""), "DL407") == []


_LISTS = """
    import numpy as np
    import torch

    def collect(device):
        firsts = [torch.ones(2, device=device)]
        rest = [torch.zeros(2, device=device)]
        both = firsts + rest
        return np.array(both)
"""


def test_concatenated_lists_keep_their_gpu_tensors():
    assert _codes(_LISTS, "DL204") == [9]


def test_concatenated_lists_of_host_tensors_are_silent():
    assert _codes(_LISTS.replace(", device=device", ""), "DL204") == []
