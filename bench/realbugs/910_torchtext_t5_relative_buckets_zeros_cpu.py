# source: https://github.com/pytorch/text/pull/1944
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the prototype T5 attention computes its relative-position buckets by starting from
#      torch.zeros(relative_position.shape, dtype=torch.long) without a device and adding terms
#      computed from relative_position, which lives on the device of the keys (the GPU when the model
#      trains there). The fix (commit 4570a56) creates the zeros on the module's device (and routes
#      the device through self.device); the zeros line is marked (DL202).
import math
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor


class T5MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, is_decoder=False, qkv_dim=8, compute_relative_attention_bias=False,
                 relative_attention_num_buckets=32, relative_attention_max_distance=128, device=None):
        super().__init__()
        self.num_heads, self.qkv_dim, self.is_decoder = num_heads, qkv_dim, is_decoder
        inner = qkv_dim * num_heads
        self.q_proj = nn.Linear(embed_dim, inner, bias=False, device=device)
        self.k_proj = nn.Linear(embed_dim, inner, bias=False, device=device)
        self.v_proj = nn.Linear(embed_dim, inner, bias=False, device=device)
        self.out_proj = nn.Linear(inner, embed_dim, bias=False, device=device)
        self.relative_attention_num_buckets = relative_attention_num_buckets
        self.relative_attention_max_distance = relative_attention_max_distance
        if compute_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(relative_attention_num_buckets, num_heads, device=device)
        else:
            self.relative_attention_bias = None

    def forward(self, query: Tensor, key: Tensor, value: Tensor, position_bias: Optional[Tensor] = None):
        B, tgt_len, _ = query.shape
        src_len = key.shape[1]
        q = self.q_proj(query).view(B, tgt_len, self.num_heads, self.qkv_dim).transpose(1, 2)
        k = self.k_proj(key).view(B, src_len, self.num_heads, self.qkv_dim).transpose(1, 2)
        v = self.v_proj(value).view(B, src_len, self.num_heads, self.qkv_dim).transpose(1, 2)
        if position_bias is None:
            position_bias = self._compute_bias(tgt_len, src_len, bidirectional=(not self.is_decoder), device=k.device)
        attn = torch.softmax(q @ k.transpose(-2, -1) + position_bias, dim=-1)
        output = (attn @ v).transpose(1, 2).reshape(B, tgt_len, -1)
        return self.out_proj(output), position_bias

    def _compute_bias(self, query_length: int, key_length: int, bidirectional: bool = True,
                      device: Optional[torch.device] = None) -> Tensor:
        assert self.relative_attention_bias is not None
        if device is None:
            device = self.relative_attention_bias.weight.device
        context_position = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        relative_position = memory_position - context_position
        bucket = self._relative_position_bucket(relative_position, bidirectional,
                                                self.relative_attention_num_buckets, self.relative_attention_max_distance)
        return self.relative_attention_bias(bucket).permute([2, 0, 1]).unsqueeze(0)

    def _relative_position_bucket(self, relative_position: Tensor, bidirectional: bool = True, num_buckets: int = 32,
                                  max_distance: int = 128) -> Tensor:
        relative_buckets = torch.zeros(relative_position.shape, dtype=torch.long)  # expect: DL202
        if bidirectional:
            num_buckets = num_buckets // 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        if_large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                                * (num_buckets - max_exact)).to(torch.long)
        if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
        relative_buckets += torch.where(is_small, relative_position, if_large)
        return relative_buckets


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    attn = T5MultiheadAttention(16, 2, compute_relative_attention_bias=True, device=device)
    x = torch.randn(2, 5, 16, device=device)
    out, bias = attn(x, x, x)
    print(out.shape, bias.shape)
