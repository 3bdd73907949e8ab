"""The analysis: a module handed to a standard-library call that only reads or describes it
(``inspect.signature``, ``logging.info``, ``str``) stays where it was; any other unseen call may
move it, and then its device is forgotten."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import inspect
    import torch
    from tools import prepare

    def pick(scores, labels):
        return torch.gather(scores, 1, torch.tensor(labels).view(-1, 1))

    def run(net, inputs, labels):
        {read}
        scores = net(*inputs)
        return pick(scores, labels)

    if __name__ == "__main__":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = torch.nn.Linear(4, 3).to(device)
        run(net, (torch.randn(2, 4, device=device),), [0, 2])
"""


def _dl202(read: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(_CODE.replace("{read}", read))) if f.code == "DL202"]


def test_a_module_whose_signature_is_read_keeps_its_device():
    assert _dl202("arity = len(inspect.signature(net).parameters)") == [7]


def test_a_module_whose_name_is_printed_keeps_its_device():
    assert _dl202("name = str(net)") == [7]


def test_a_module_handed_to_unseen_code_is_forgotten():
    assert _dl202("prepare(net)") == []
