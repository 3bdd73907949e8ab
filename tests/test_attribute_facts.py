"""Facts about tensors kept as attributes and about tensor ranks (session 12, tune11)."""

from __future__ import annotations

from conftest import lint


def codes(code: str) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.code) for finding in lint(code))


def test_a_helpers_host_tensor_kept_by_a_modules_init_is_reported_once_at_the_attribute():
    # the helper's factory is not reported again by DL202 where `forward` reads the attribute
    code = (
        "import torch\nfrom torch import nn\ndef table(n):\n    return torch.arange(n, dtype=torch.float32)\n"
        "class Positions(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.table = table(n)\n"
        "    def forward(self, hidden):\n        return hidden + self.table[: hidden.size(1)]\n"
    )
    assert codes(code) == [(8, "DL103")]


def test_a_helpers_host_tensor_made_in_forward_is_still_dl202s():
    code = (
        "import torch\nfrom torch import nn\ndef table(n):\n    return torch.arange(n, dtype=torch.float32)\n"
        "class Positions(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.proj = nn.Linear(4, 4)\n"
        "    def forward(self, hidden):\n        return self.proj(hidden) + table(hidden.size(1))[:4]\n"
    )
    assert (4, "DL202") in codes(code)
