"""The analysis: an object of a plain class whose ``__init__`` keeps a tensor argument as it came
in (``self.ids = ids``) holds the tensor that its construction handed it, whatever function the
object is returned to and read in - also a method analysed before the constructing code."""

from __future__ import annotations

import textwrap

from conftest import lint

_CODE = """
    import torch
    import torch.nn as nn

    class Encoded:
        def __init__(self, ids, mask):
            self.ids = ids
            self.mask = mask
    {extra}

    class Encoder:
        def __call__(self, words):
            ids = [[len(w) % 7 for w in line.split()] for line in words]
            return Encoded(torch.tensor(ids), None)

    class Runner:
        def __init__(self, device):
            self.embed = nn.Embedding(7, 3).to(device)

        def run(self):
            encode = Encoder()
            batch = encode(["to be", "or not"])
            return self.embed({read})
"""


def _codes(read: str = "batch.ids", extra: str = "") -> list[tuple[int, str]]:
    source = textwrap.dedent(_CODE.replace("{read}", read).replace("{extra}", extra))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


def test_a_host_tensor_held_by_a_returned_object_meets_the_moved_module():
    assert _codes() == [(14, "DL202")]


def test_an_object_whose_method_replaces_the_attribute_says_nothing():
    assert _codes(extra="\n        def refresh(self, ids):\n            self.ids = ids\n") == []


def test_an_object_that_places_itself_says_nothing():
    assert _codes(extra="\n        def to(self, device):\n            return Encoded(self.ids.to(device), self.mask)\n") == []


def test_an_attribute_set_by_name_says_nothing():
    extra = "\n        def load(self, **entries):\n            for key, value in entries.items():\n                setattr(self, key, value)\n"
    assert _codes(extra=extra) == []


def test_a_tensor_moved_before_it_is_read_says_nothing():
    assert _codes(read="batch.ids.to(self.embed.weight.device)") == []


_TOKENIZER = """
    import torch
    import torch.nn as nn

    class Encoding:
        def __init__(self, input_ids):
            self.input_ids = input_ids

    class WordTokenizer:
        def __call__(self, texts, return_tensors=None):
            rows = [[len(word) for word in text.split()] for text in texts]
            return Encoding(torch.tensor(rows))

    class Captioner:
        def __init__(self, device):
            self.device = device
            self.tokenizer = WordTokenizer()
            self.text_model = nn.Embedding(16, 8)

        def prepare(self):
            self.text_model.to(self.device)

        def encode(self, texts):
            ids = self.tokenizer(texts, return_tensors="pt").input_ids{move}
            return self.text_model(ids)

    if __name__ == "__main__":
        captioner = Captioner(torch.device("cuda" if torch.cuda.is_available() else "cpu"))
        captioner.prepare()
        captioner.encode(["a cat", "two dogs"])
"""


def test_an_encoding_object_asked_for_pt_tensors_holds_host_data_reported_at_the_tokenizer_call():
    found = [(f.line, f.code) for f in lint(textwrap.dedent(_TOKENIZER.replace("{move}", "")))]
    assert found == [(24, "DL203")]


def test_an_encoding_object_whose_ids_are_moved_says_nothing():
    assert [f.code for f in lint(textwrap.dedent(_TOKENIZER.replace("{move}", ".to(self.device)")))] == []
