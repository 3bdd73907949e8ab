"""A dataclass built by unpacking a sequence into its generated ``__init__``
(``Record(*(t.to(device) for t in astuple(self)))``, the usual hand-written ``to()`` of a
dataclass of tensors) binds its fields in order to the sequence's elements: each field is what
the elements are (all moved to ``device`` here)."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import dataclasses
    import torch

    @dataclasses.dataclass
    class Record:
        keys: torch.Tensor
        weights: torch.Tensor

        def to(self, device):
            return Record(*({moved} for t in {fields}))

    def shifted(record, count):
        return record.keys + torch.arange(count)

    def run(device):
        record = Record(torch.tensor([0, 2, 4]), torch.rand(3))
        return shifted(record.to(device), 3)
"""


def _dl202(moved: str = "t.to(device)", fields: str = "dataclasses.astuple(self)") -> list[int]:
    code = textwrap.dedent(_CODE.format(moved=moved, fields=fields))
    return [f.line for f in lint(code) if f.code == "DL202"]


def test_fields_unpacked_from_moved_elements_are_on_the_device():
    assert _dl202() == [14]


def test_fields_unpacked_from_a_tuple_of_its_attributes_are_on_the_device():
    assert _dl202(fields="(self.keys, self.weights)") == [14]


def test_fields_unpacked_from_host_copies_stay_silent():
    assert _dl202(moved="t.cpu()") == []


def test_fields_unpacked_unmoved_stay_silent():
    assert _dl202(moved="t") == []
