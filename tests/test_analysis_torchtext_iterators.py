"""The analysis: torchtext's legacy iterators (``data.BucketIterator``, ``Iterator``,
``BPTTIterator``, their ``.splits``) yield batches whose field attributes (``batch.src``) are
tensors made on the device the iterator was given - the CPU without one (torchtext 0.3 and
later, ``torchtext.legacy`` too)."""

from __future__ import annotations

import textwrap

from conftest import lint

_PROGRAM = """
    import torch
    import torch.nn as nn
    from torchtext.legacy import data

    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Embedding(50, 6)

        def forward(self, ids):
            return self.table(ids).sum(1)

    SRC = data.Field(batch_first=True)
    rows = data.TabularDataset("rows.csv", format="csv", fields=[("src", SRC)])
    run_on = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    reader = Reader().to(run_on)
    {make}
    for batch in chunks:
        scores = reader(batch.src{move})
"""


def _codes(make: str, move: str = "") -> list[tuple[int, str]]:
    source = textwrap.dedent(_PROGRAM.replace("{make}", make).replace("{move}", move))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


def test_an_iterator_given_no_device_yields_host_batches():
    assert _codes("chunks = data.BucketIterator(rows, batch_size=8)") == [(20, "DL203")]


def test_splits_give_one_host_loader_per_dataset():
    assert _codes("_, chunks = data.Iterator.splits((rows, rows), batch_size=8)") == [(20, "DL203")]


def test_an_iterator_given_the_run_device_stays_quiet():
    assert _codes("chunks = data.BucketIterator(rows, batch_size=8, device=run_on)") == []
    assert _codes("_, chunks = data.BucketIterator.splits((rows, rows), batch_size=8, device=run_on)") == []


def test_fields_moved_by_the_loop_stay_quiet():
    assert _codes("chunks = data.BucketIterator(rows, batch_size=8)", move=".to(run_on)") == []
