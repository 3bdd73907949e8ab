"""``torch.set_default_tensor_type(torch.cuda.FloatTensor)`` (or its name as a string) makes
factories create CUDA tensors, as ``torch.set_default_device("cuda")`` does; a CPU type sets the
host back. ``random_split(dataset, lengths)`` without ``generator=`` permutes with
``randperm(n, generator=default_generator)``: the default CPU generator drawing on the default
device, which fails on a GPU ("Expected a 'cuda' device type for generator but found 'cpu'"),
as a shuffling DataLoader does. Checked on an H200: both raise; a CUDA generator works."""

from __future__ import annotations

from conftest import line_codes


def _dl208(code):
    return [line for line, code_ in line_codes(code) if code_ == "DL208"]


def test_random_split_and_shuffling_loader_under_a_cuda_default_tensor_type():
    for setting in ("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "torch.set_default_tensor_type('torch.cuda.FloatTensor')"):
        code = (
            "import torch\n"  # 1
            "from torch.utils.data import DataLoader, random_split\n"  # 2
            "if torch.cuda.is_available():\n"  # 3
            f"    {setting}\n"  # 4
            "def split(items):\n"  # 5
            "    train, test = random_split(items, [8, 2])\n"  # 6
            "    return DataLoader(train, batch_size=2, shuffle=True), test\n"  # 7
            "if __name__ == '__main__':\n"  # 8
            "    split(list(range(10)))\n"  # 9
        )
        assert _dl208(code) == [6, 7], setting


def test_random_split_with_a_generator_on_the_host_default_or_after_a_cpu_type_stays_silent():
    given = (
        "import torch\n"
        "from torch.utils.data import random_split\n"
        "torch.set_default_device('cuda')\n"
        "parts = random_split(list(range(10)), [5, 5], generator=torch.Generator(device='cuda'))\n"
    )
    assert _dl208(given) == []
    host = "import torch\nfrom torch.utils.data import random_split\nparts = random_split(list(range(10)), [5, 5])\n"
    assert _dl208(host) == []
    reset = (
        "import torch\n"
        "from torch.utils.data import random_split\n"
        "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n"
        "torch.set_default_tensor_type(torch.FloatTensor)\n"
        "parts = random_split(list(range(10)), [5, 5])\n"
    )
    assert _dl208(reset) == []
