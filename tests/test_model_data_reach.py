"""Data and modules that reach a model on another device - where a finding
is reported, and the analysis facts that let DL201/DL203/DL104/... see the data reach the model."""

from __future__ import annotations

from conftest import line_codes

_PACKER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "from torch.nn.utils.rnn import pack_padded_sequence\n"  # 3
    "class Packer(nn.Module):\n"  # 4
    "    def forward(self, seq, sizes):\n"  # 5
    "        packed = pack_padded_sequence(\n"  # 6
    "            seq,\n"  # 7
    "            sizes,\n"  # 8
    "            batch_first=True)\n"  # 9
    "        return packed\n"  # 10
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 11
    "net = Packer().to(dev)\n"  # 12
)


def test_a_gpu_length_is_reported_on_the_line_of_the_argument_that_carries_it():
    code = _PACKER + "out = net(torch.zeros(2, 3, 4).to(dev), torch.tensor([3, 2]).to(dev))\n"
    assert line_codes(code) == [(8, "DL201")]


def test_host_lengths_handed_to_a_multiline_pack_stay_quiet():
    code = _PACKER + "out = net(torch.zeros(2, 3, 4).to(dev), torch.tensor([3, 2]))\n"
    assert line_codes(code) == []


def test_a_gpu_length_keyword_read_in_place_is_reported_at_the_keyword():
    code = (
        "import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"
        "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "sizes = torch.tensor([3, 2]).to(dev)\n"
        "packed = pack_padded_sequence(torch.zeros(2, 3, 4),\n"
        "                              lengths=sizes,\n"
        "                              batch_first=True)\n"
    )
    assert (6, "DL201") in line_codes(code)


_READER = (
    "import torch\nfrom torch import nn\n"  # 1-2
    "class Reader:\n"  # 3
    "    def __init__(self, net, vocab):\n"  # 4
    "        self.net = net\n"  # 5
    "        self.vocab = vocab\n"  # 6
    "    def score(self, text):\n"  # 7
    "        ids = self.vocab.encode(text, return_tensors='pt')\n"  # 8
    "        return self.net(ids)\n"  # 9
    "net = nn.Embedding(50, 8).to('cuda')\n"  # 10
    "Reader(net, load_vocab()).score('some words')\n"  # 11
)


def test_text_made_into_pytorch_tensors_by_an_object_of_unknown_class_is_host_data():
    # `return_tensors="pt"` asks for host tensors made from the text, whatever the object is
    assert line_codes(_READER) == [(8, "DL203")]


def test_text_tensors_moved_where_they_are_made_stay_quiet():
    assert line_codes(_READER.replace("return_tensors='pt')", "return_tensors='pt').to('cuda')")) == []


def test_a_call_that_asks_for_no_tensors_is_not_data():
    assert line_codes(_READER.replace(", return_tensors='pt'", "")) == []


def test_features_asked_of_a_processor_handed_to_a_moved_model_unmoved():
    code = (
        "import torch\nfrom torch import nn\n"
        "model = nn.Linear(4, 2).to('cuda')\n"
        "processor = make_processor()\n"
        "def describe(image):\n"
        "    feats = processor(images=image, return_tensors='pt')\n"  # 6
        "    return model(**feats)\n"
    )
    assert line_codes(code) == [(6, "DL203")]
    assert line_codes(code.replace("return_tensors='pt')", "return_tensors='pt').to('cuda')")) == []


def test_a_file_class_whose_call_moves_what_it_returns_is_believed():
    code = (
        "import torch\nfrom torch import nn\n"
        "class Prep:\n"
        "    def __call__(self, text, return_tensors='pt'):\n"
        "        return torch.zeros(2, 3, device='cuda')\n"
        "net = nn.Linear(3, 2).to('cuda')\n"
        "out = net(Prep()('abc', return_tensors='pt'))\n"
    )
    assert line_codes(code) == []


_KEEPER = (
    "import numpy as np\nimport torch\nfrom torch import nn\n"  # 1-3
    "class Policy:\n"  # 4
    "    def __init__(self, device):\n"  # 5
    "        self.net = nn.Linear(4, 2).to(device)\n"  # 6
    "class Actor:\n"  # 7
    "    def __init__(self, device):\n"  # 8
    "        self.policy = Policy(device)\n"  # 9
    "    def act(self, obs):\n"  # 10
    "        return self.policy.net(torch.from_numpy(np.asarray(obs)))\n"  # 11
    "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"  # 12
    "Actor(dev).act([0.0] * 4)\n"  # 13
)


def test_a_module_another_object_keeps_is_called_as_that_module():
    # `self.policy.net(...)` is no method of Policy: it calls the moved network Policy keeps
    assert line_codes(_KEEPER) == [(11, "DL203")]


def test_a_module_another_object_keeps_given_moved_data_stays_quiet():
    assert line_codes(_KEEPER.replace("np.asarray(obs)))", "np.asarray(obs)).to(dev))")) == []


def test_objects_that_keep_modules_placed_differently_tell_nothing_of_one_of_them():
    code = (
        "import torch\nfrom torch import nn\n"
        "class Holder:\n"
        "    def __init__(self, model):\n"
        "        self.model = model\n"
        "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "trained = Holder(nn.Linear(4, 2).to(dev))\n"
        "fresh = Holder(nn.Linear(4, 2))\n"
        "print(fresh.model(torch.randn(1, 4)))\n"
    )
    assert line_codes(code) == []


def test_a_leaf_asked_for_on_the_host_and_moved_is_no_leaf():
    code = (
        "import torch\n"
        "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "gains = [torch.full((3,), 0.5, requires_grad=True).cuda() for _ in range(2)]\n"  # 3
        "bias = torch.zeros(3, requires_grad=True).to(device=dev)\n"  # 4
        "opt = torch.optim.Adam(gains + [bias])\n"
    )
    assert [c for c in line_codes(code) if c[1] == "DL102"] == [(3, "DL102"), (4, "DL102")]


def test_leaves_made_on_their_device_or_without_gradients_or_only_cast_stay_quiet():
    code = (
        "import torch\n"
        "dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "gains = torch.full((3,), 0.5, device=dev, requires_grad=True)\n"
        "frozen = torch.zeros(3, requires_grad=False).to(dev)\n"
        "typed = torch.zeros(3, requires_grad=True).to(torch.float64)\n"
        "opt = torch.optim.Adam([gains])\n"
    )
    assert [c for c in line_codes(code) if c[1] == "DL102"] == []
