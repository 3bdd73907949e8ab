"""DL204: scikit-learn estimators check the data handed to fit/transform/predict with numpy; and
``list()`` is an empty list, like ``[]``, so what is appended to it is known."""

from __future__ import annotations

import textwrap

from conftest import lint

_PROGRAM = """
    import torch
    from sklearn.decomposition import PCA
    from sklearn.cluster import KMeans

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = torch.nn.Linear(16, 8).to(device)
    feats = list()
    with torch.no_grad():
        for _ in range(3):
            feats.append(net(torch.randn(4, 16).to(device)))
    stacked = torch.cat(feats)
"""


def _dl204(source: str) -> list[int]:
    return [f.line for f in lint(textwrap.dedent(source)) if f.code == "DL204"]


def test_gpu_features_handed_to_an_estimator_are_reported():
    assert _dl204(_PROGRAM + "    emb = PCA(2).fit_transform(stacked)\n") == [13]
    assert _dl204(_PROGRAM + "    km = KMeans(3)\n    km.fit(stacked)\n") == [14]


def test_features_moved_to_the_host_first_are_silent():
    assert _dl204(_PROGRAM + "    emb = PCA(2).fit_transform(stacked.cpu())\n") == []
    assert _dl204(_PROGRAM + "    km = KMeans(3)\n    km.fit(stacked.detach().cpu().numpy())\n") == []


def test_a_method_of_an_object_of_another_library_is_not_an_estimator():
    source = _PROGRAM.replace("from sklearn.cluster import KMeans", "from mylib import KMeans")
    assert _dl204(source + "    km = KMeans(3)\n    km.fit(stacked)\n") == []


_ARRAYS = """
    import numpy as np
    import torch

    def pick(order_mask, scores, device):
        keep = order_mask.astype(bool).nonzero()[0]
        drawn = torch.multinomial(scores.to(device), 4)
        return {}

    pick(np.ones(10), torch.rand(10), torch.device("cuda" if torch.cuda.is_available() else "cpu"))
"""


def test_a_numpy_array_indexed_by_a_gpu_tensor_is_reported():
    # the array comes from a numpy array's own methods (astype, nonzero()[0]); numpy converts the index
    source = _ARRAYS.replace("keep = order_mask", "keep = np.ones(10).astype(bool).nonzero()[0]  #").replace("{}", "keep[drawn]")
    assert _dl204(source) == [8]


def test_a_numpy_array_indexed_by_a_host_or_0_dim_tensor_is_silent():
    assert _dl204(_ARRAYS.replace("{}", "np.arange(10)[drawn.cpu()]")) == []
    assert _dl204(_ARRAYS.replace("{}", "np.arange(10)[drawn[0].sum()]")) == []
