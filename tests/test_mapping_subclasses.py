"""A ``dict`` subclass of the file that builds its objects as ``dict`` does (an encoding written to
the transformers convention) holds what it is given: a dict batch of its tensors, where they are,
whose own ``to()`` runs. A result computed from a host tensor with a dimension and one that may be
on the accelerator is on the accelerator (where the operation runs at all on a GPU run)."""

from __future__ import annotations

from conftest import lint

_HEAD = (
    "import numpy as np\n"  # 1
    "import torch\n"  # 2
    "from torch import nn\n"  # 3
    "device = 'cuda:0' if torch.cuda.is_available() else 'cpu'\n"  # 4
    "class Features(dict):\n"  # 5
    "    def to(self, device):\n"  # 6
    "        return Features({name: t.to(device) for name, t in self.items()})\n"  # 7
    "class Tagger(nn.Module):\n"  # 8
    "    def __init__(self):\n"  # 9
    "        super().__init__()\n"  # 10
    "        self.table = nn.Embedding(30, 4)\n"  # 11
    "    def forward(self, ids, weights):\n"  # 12
    "        return self.table(ids) * weights.unsqueeze(-1)\n"  # 13
)


def test_moved_encoding_of_the_file_meets_a_model_left_on_the_host():
    source = _HEAD + (
        "def tag(rows):\n"  # 14
        "    ids = torch.from_numpy(np.asarray(rows))\n"  # 15
        "    tagger = Tagger()\n"  # 16
        "    feats = Features(ids=ids, weights=ids.float()).to(device)\n"  # 17
        "    return tagger(**feats)\n"  # 18
        "tag([[1, 2]])\n"  # 19
    )
    findings = [f for f in lint(source) if f.code == "DL201"]
    assert [f.line for f in findings] == [18]


def test_unmoved_encoding_of_data_reaches_a_moved_model():
    source = _HEAD + (
        "def tag(rows):\n"  # 14
        "    ids = torch.from_numpy(np.asarray(rows))\n"  # 15
        "    tagger = Tagger().to(device)\n"  # 16
        "    feats = Features({'ids': ids, 'weights': ids.float()})\n"  # 17
        "    return tagger(**feats)\n"  # 18
        "tag([[1, 2]])\n"  # 19
    )
    assert [f.line for f in lint(source) if f.code == "DL203"] == [18]


def test_encoding_moved_with_its_own_to_next_to_a_moved_model_is_silent():
    source = _HEAD + (
        "def tag(rows):\n"  # 14
        "    ids = torch.from_numpy(np.asarray(rows))\n"  # 15
        "    tagger = Tagger().to(device)\n"  # 16
        "    feats = Features(ids=ids, weights=ids.float()).to(device)\n"  # 17
        "    return tagger(**feats)\n"  # 18
        "tag([[1, 2]])\n"  # 19
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_dict_subclass_with_its_own_constructor_is_not_taken_for_its_arguments():
    source = _HEAD + (
        "class Record(dict):\n"  # 14
        "    def __init__(self, ids, weights):\n"  # 15
        "        super().__init__(ids=ids.to(device), weights=weights.to(device))\n"  # 16
        "def tag(rows):\n"  # 17
        "    ids = torch.from_numpy(np.asarray(rows))\n"  # 18
        "    tagger = Tagger().to(device)\n"  # 19
        "    return tagger(**Record(ids=ids, weights=ids.float()))\n"  # 20
        "tag([[1, 2]])\n"  # 21
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []


def test_result_of_a_host_tensor_and_a_model_output_is_on_the_accelerator():
    source = (
        "import numpy as np\n"  # 1
        "import torch\n"  # 2
        "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 3
        "def pool(hidden, mask):\n"  # 4
        "    return hidden.sum(dim=1) / mask.sum(dim=1)[..., None]\n"  # 5
        "def embed(model, x, mask_rows):\n"  # 6
        "    hidden = model(x.to(device))\n"  # 7
        "    mask = torch.from_numpy(np.asarray(mask_rows))\n"  # 8
        "    return pool(hidden, mask).detach().numpy()\n"  # 9
        "embed(torch.nn.Linear(4, 4).to(device), torch.zeros(2, 3, 4), [[1, 1, 1], [1, 1, 0]])\n"  # 10
    )
    assert 9 in [f.line for f in lint(source) if f.code == "DL204"]


def test_dataclass_over_an_ordered_dict_is_not_taken_for_a_dict_of_its_arguments():
    # transformers' and diffusers' outputs: `@dataclass` subclasses of an OrderedDict base, built
    # by their generated `__init__` from fields - not a dict batch of what they are given
    source = _HEAD + (
        "from collections import OrderedDict\n"  # 14
        "from dataclasses import dataclass\n"  # 15
        "class BaseOutput(OrderedDict):\n"  # 16
        "    pass\n"  # 17
        "@dataclass\n"  # 18
        "class Inputs(BaseOutput):\n"  # 19
        "    ids: torch.Tensor\n"  # 20
        "    weights: torch.Tensor\n"  # 21
        "def tag(rows):\n"  # 22
        "    ids = torch.from_numpy(np.asarray(rows))\n"  # 23
        "    tagger = Tagger().to(device)\n"  # 24
        "    return tagger(**Inputs(ids=ids, weights=ids.float()))\n"  # 25
        "tag([[1, 2]])\n"  # 26
    )
    assert [f for f in lint(source) if f.code in ("DL201", "DL203")] == []
