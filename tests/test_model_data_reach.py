"""Session 18, tuner A: data and modules that reach a model on another device - where a finding
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
