"""An object of a plain class whose ``__init__`` keeps its tensor arguments as they come in
(``self.ids = ids``), and whose other methods neither assign nor move them, holds the tensors
its own construction hands in: ``Pair(self.ids.to(d), ...)`` in its hand-written ``to()`` is
a moved object, whatever other constructions of the class hold. Code that may store new
tensors in an object (a function of the file that assigns ``box.ids = ...``, or code the
analysis cannot see) leaves its tensor attributes unknown - for dataclasses too."""

from __future__ import annotations

import textwrap

from conftest import lint

_PAIR = """
    import torch

    class Pair:
        def __init__(self, ids, mask):
            self.ids = ids
            self.mask = mask

        def to(self, device):
            return Pair(self.ids.to(device), self.mask.to(device))

    def run(device):
        pair = Pair(torch.tensor([3, 1, 2]), torch.ones(3))
        moved = pair.to(device)
        return moved.ids + {other}
"""


def _dl202(code: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(code)) if f.code == "DL202"]


def test_the_moved_copy_meets_a_host_tensor():
    assert _dl202(_PAIR.format(other="torch.arange(3)")) == [15]


def test_the_moved_copy_meets_a_tensor_on_its_device_silently():
    # (the class-level view mixed in the host construction and reported the line-13 tensor)
    assert _dl202(_PAIR.format(other="torch.ones(3, device=device)")) == []


_HANDED = """
    import dataclasses
    import torch
    from elsewhere import relocate

    {decorator}
    class Box:
        {body}

    def place(box, device):
        box.ids = box.ids.to(device)

    def run(device):
        box = Box(torch.arange(3))
        {call}
        return box.ids + torch.ones(3, device=device)
"""

_PLAIN = "def __init__(self, ids):\n            self.ids = ids"


def _handed(call: str, dataclass: bool) -> list[int]:
    body = "ids: torch.Tensor" if dataclass else _PLAIN
    code = _HANDED.format(decorator="@dataclasses.dataclass" if dataclass else "", body=body, call=call)
    return _dl202(code)


def test_a_dataclass_handed_to_a_function_that_stores_its_tensor_is_silent():
    assert _handed("place(box, device)", dataclass=True) == []


def test_a_dataclass_handed_to_unseen_code_is_silent():
    assert _handed("relocate(box, device)", dataclass=True) == []


def test_a_dataclass_read_by_a_function_keeps_its_host_tensor():
    assert _handed("print(len(box.ids))", dataclass=True) == [14]


# a plain object handed to code that may store new tensors in it no longer reads the class-level
# view of them (what every construction hands in) afterwards: on main a false DL202 each

_BUILT_INSIDE = "def __init__(self, n):\n            self.ids = torch.arange(n).long()"


def _handed_plain(call: str, body: str = _PLAIN) -> list[int]:
    code = _HANDED.format(decorator="", body=body, call=call)
    if body is _BUILT_INSIDE:
        code = code.replace("Box(torch.arange(3))", "Box(3)")
    return _dl202(code)


def test_a_plain_object_handed_to_a_function_that_stores_its_tensor_is_silent():
    assert _handed_plain("place(box, device)") == []
    assert _handed_plain("place(box, device)", _BUILT_INSIDE) == []


def test_a_plain_object_handed_to_unseen_code_is_silent():
    assert _handed_plain("relocate(box, device)") == []
    assert _handed_plain("relocate(box, device)", _BUILT_INSIDE) == []


def test_a_plain_object_read_or_printed_keeps_its_host_tensor():
    assert _handed_plain("print(len(box.ids))") == [15]
    assert _handed_plain("print(box)", _BUILT_INSIDE) == [9]
    assert _handed_plain("pass", _BUILT_INSIDE) == [9]
