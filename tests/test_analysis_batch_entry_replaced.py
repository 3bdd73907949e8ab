"""The analysis: a dict batch one entry of which is stored back (``batch["img"] =
batch["img"].to(dev)``) keeps its other entries where they were - on the host for a batch a
DataLoader yields - and DL203 reports the batch handed whole to a moved model only where that
model's ``forward`` reads an entry that was left behind."""

from __future__ import annotations

import textwrap

from conftest import lint

_PROGRAM = """
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, Dataset

    class Clips(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            return {"img": torch.rand(3, 8), "tag": torch.randint(0, 5, (4,))}

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.see = nn.Linear(8, 3)
            self.name = nn.Embedding(5, 3)

        def forward(self, sample):
            return {reads}

    def fit():
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = Fusion().to(dev)
        for sample in DataLoader(Clips(), batch_size=4):
            {store}
            out = net(sample)
            {after}

    fit()
"""


def _codes(reads: str, store: str, after: str = "pass") -> list[tuple[int, str]]:
    source = textwrap.dedent(_PROGRAM.replace("{reads}", reads).replace("{store}", store).replace("{after}", after))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


_BOTH = 'self.see(sample["img"]).sum() + self.name(sample["tag"]).sum()'


def test_an_entry_left_behind_that_forward_reads_is_reported_at_the_model_call():
    assert _codes(_BOTH, 'sample["img"] = sample["img"].to(dev)') == [(27, "DL203")]


def test_a_dict_comprehension_stored_back_leaves_the_other_entry_on_the_host():
    source_store = 'sample["tag"] = {k: v.to(dev) for k, v in {"a": sample["tag"]}.items()}["a"]'
    assert _codes(_BOTH, source_store) == [(27, "DL203")]


def test_every_entry_forward_reads_stored_back_stays_quiet():
    assert _codes('self.see(sample["img"]).sum()', 'sample["img"] = sample["img"].to(dev)') == []
    both = 'sample["img"] = sample["img"].to(dev); sample["tag"] = sample["tag"].to(dev)'
    assert _codes(_BOTH, both) == []


def test_an_entry_left_behind_read_outside_the_model_keeps_the_host():
    # the entry read after the store is still the loader's host tensor: it meets the output
    found = _codes('self.see(sample["img"])', 'sample["img"] = sample["img"].to(dev)', after='loss = (out - sample["tag"]).sum()')
    assert found and all(line == 28 for line, _ in found)


_NESTED = """
    import torch
    import torch.nn as nn

    class Fusion(nn.Module):
        def __init__(self):
            super().__init__()
            self.see = nn.Linear(8, 3)

        def forward(self, sample):
            return self.see(sample["img"])

    def fit():
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net = Fusion().to(dev)
        for sample in [{"img": torch.rand(3, 8){move}, "meta": {"tag": torch.zeros(4){move}}} for _ in range(2)]:
            out = net(sample)

    fit()
"""


def test_a_dict_holding_a_nested_dict_is_followed_into_forward():
    # its values are not one kind (a tensor and a dict); the entries kept by key say where the
    # tensor is, and forward gets a pass on this call's values
    found = [(f.line, f.code) for f in lint(textwrap.dedent(_NESTED.replace("{move}", ""))) if f.severity.name in ("ERROR", "WARNING")]
    assert found == [(16, "DL202")]


def test_a_nested_dict_of_moved_tensors_stays_quiet():
    found = [(f.line, f.code) for f in lint(textwrap.dedent(_NESTED.replace("{move}", ".to(dev)"))) if f.severity.name in ("ERROR", "WARNING")]
    assert found == []
