# source: https://github.com/torchgeo/torchgeo/pull/3232
# error: device mismatch during GPU training/inference: attn_bias stays on the CPU
# bug: CROMA computes its 2D-ALiBi attention bias once in __init__ and keeps it as a plain
#      attribute, so moving the model to the GPU leaves it behind and the encoders add a CPU
#      bias to CUDA attention logits.
import itertools
import math

import torch
from torch import Tensor, nn


def get_2dalibi(num_heads: int, num_patches: int) -> Tensor:
    side = int(math.sqrt(num_patches))
    points = list(itertools.product(range(side), range(side)))
    start = 2 ** (-(2 ** -(math.log2(num_heads) - 3)))
    slopes = torch.Tensor([start * start**i for i in range(num_heads)]).unsqueeze(1)
    idxs = []
    for p1 in points:
        for p2 in points:
            dist = math.sqrt((p1[0] - p2[0]) ** 2 + (p1[1] - p2[1]) ** 2)
            idxs.append(dist * slopes * -1)
    return torch.cat(idxs, dim=1).view(1, num_heads, num_patches, num_patches)


class ViT(nn.Module):
    def __init__(self, dim: int, num_heads: int, in_channels: int, patch_size: int = 8) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.patch_embed = nn.Conv2d(in_channels, dim, patch_size, stride=patch_size)
        self.to_qkv = nn.Linear(dim, 3 * dim)

    def forward(self, imgs: Tensor, attn_bias: Tensor) -> Tensor:
        x = self.patch_embed(imgs).flatten(2).transpose(1, 2)
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).view(b, n, 3, self.num_heads, d // self.num_heads).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-2, -1) / math.sqrt(d // self.num_heads)
        attn = (logits + attn_bias).softmax(dim=-1)
        return (attn @ v).transpose(1, 2).reshape(b, n, d)


class CROMA(nn.Module):
    def __init__(self, encoder_dim: int = 768, num_heads: int = 16, image_size: int = 120) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_patches = int((image_size / 8) ** 2)
        self.register_buffer("attn_bias", get_2dalibi(num_heads=self.num_heads, num_patches=self.num_patches))
        self.s2_encoder = ViT(dim=encoder_dim, num_heads=num_heads, in_channels=12)
        self.s2_GAP_FFN = nn.Sequential(nn.LayerNorm(encoder_dim), nn.Linear(encoder_dim, encoder_dim))

    def forward(self, x_optical: Tensor) -> dict[str, Tensor]:
        optical_encodings = self.s2_encoder(imgs=x_optical, attn_bias=self.attn_bias)
        return {"optical_encodings": optical_encodings, "optical_GAP": self.s2_GAP_FFN(optical_encodings.mean(dim=1))}
