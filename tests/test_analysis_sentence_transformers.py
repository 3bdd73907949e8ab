"""The analysis: sentence-transformers' ``SentenceTransformer(name)`` places itself on the
accelerator where one is available (no device given), ``encode(..., convert_to_tensor=True)``
returns the embeddings where the model is, and ``util.cos_sim`` (``pytorch_cos_sim``) gives a
tensor where its two tensor arguments are - so numpy reading the scores needs ``.cpu()``."""

from __future__ import annotations

import textwrap

from conftest import lint

_SEARCH = """
    import numpy as np
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.util import cos_sim

    encoder = SentenceTransformer("paraphrase-model"{device})
    passages = ["red apple", "green pear", "blue sky"]
    bank = encoder.encode(passages{flag})

    def rank(question):
        vec = encoder.encode(question{flag})
        sims = cos_sim(vec, bank)[0]
        return np.argsort({scores})[::-1]

    print(rank("fruit"))
"""


def _codes(device: str = "", flag: str = ", convert_to_tensor=True", scores: str = "-sims") -> list[tuple[int, str]]:
    source = textwrap.dedent(_SEARCH.replace("{device}", device).replace("{flag}", flag).replace("{scores}", scores))
    return [(f.line, f.code) for f in lint(source) if f.severity.name in ("ERROR", "WARNING")]


def test_numpy_reading_the_similarities_of_tensor_embeddings_is_reported():
    assert _codes() == [(13, "DL204")]


def test_scores_moved_to_the_host_stay_quiet():
    assert _codes(scores="-sims.cpu()") == []


def test_a_model_loaded_on_the_cpu_stays_quiet():
    assert _codes(device=', device="cpu"') == []


def test_numpy_embeddings_stay_quiet():
    # without convert_to_tensor, encode returns numpy arrays (moved to the host inside encode)
    assert _codes(flag="") == []
