"""Elementwise math methods (`x.erf()`, `x.log1p()`, `x.reciprocal()`) give a tensor where the
receiver is, of its shape: a host factory meeting one meets the receiver's device."""

from conftest import lint


def test_a_host_factory_meets_the_result_of_an_elementwise_method_of_a_gpu_tensor():
    code = (
        "import torch\nfrom torch import nn\nclass Head(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.proj = nn.Linear(4, 4)\n    def forward(self, x):\n"
        "        phi = (self.proj(x) / 1.41).erf().log1p()\n        out = phi * torch.rand(4, 4)\n        return out.sum()\n"
    )
    assert [(finding.line, finding.code) for finding in lint(code)] == [(9, "DL202")]
