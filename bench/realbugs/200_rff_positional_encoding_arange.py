# source: https://github.com/jmclong/random-fourier-features-pytorch/pull/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the functional positional encoding builds its frequency index with torch.arange(m) on the CPU,
#      then multiplies it with the input coordinates, which live on the GPU when the layer runs there.
import numpy as np
import torch
import torch.nn as nn
from torch import Tensor


@torch.jit.script
def positional_encoding(v: Tensor, sigma: float, m: int) -> Tensor:
    j = torch.arange(m)  # expect: DL202
    coeffs = 2 * np.pi * sigma ** (j / m)
    vp = coeffs * torch.unsqueeze(v, -1)
    vp_cat = torch.cat((torch.cos(vp), torch.sin(vp)), dim=-1)
    return vp_cat.flatten(-2, -1)


class PositionalEncoding(nn.Module):
    def __init__(self, sigma: float, m: int):
        super().__init__()
        self.sigma = sigma
        self.m = m

    def forward(self, v: Tensor) -> Tensor:
        return positional_encoding(v, self.sigma, self.m)


if __name__ == "__main__":
    encoding = PositionalEncoding(sigma=10.0, m=8).cuda()
    coords = torch.rand(256, 2, device="cuda")
    features = encoding(coords)
