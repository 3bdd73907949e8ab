# source: https://github.com/mosaicml/llm-foundry/pull/1332
# error: device mismatch in hf.generate on several GPUs with device_map='auto' (pipeline placement)
# bug: with device_map='auto' the block's sub-modules can sit on different GPUs; the FFN output is
#      added to the residual stream x without aligning devices.
import torch
import torch.nn as nn


class MPTMLP(nn.Module):
    def __init__(self, d_model, expansion_ratio=4):
        super().__init__()
        self.up_proj = nn.Linear(d_model, expansion_ratio * d_model)
        self.act = nn.GELU(approximate='none')
        self.down_proj = nn.Linear(expansion_ratio * d_model, d_model)

    def forward(self, x):
        return self.down_proj(self.act(self.up_proj(x)))


class MPTBlock(nn.Module):
    def __init__(self, d_model, n_heads, resid_pdrop=0.0):
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.norm_2 = nn.LayerNorm(d_model)
        self.ffn = MPTMLP(d_model)
        self.resid_attn_dropout = nn.Dropout(resid_pdrop)
        self.resid_ffn_dropout = nn.Dropout(resid_pdrop)

    def apply_ffn(self, attention_mask, m):
        return self.ffn(m)

    def forward(self, x, attn_bias=None, attention_mask=None, is_causal=True):
        a = self.norm_1(x)
        b, attn_weights = self.attn(a, a, a, attn_mask=attn_bias, need_weights=False, is_causal=is_causal)
        x = x + self.resid_attn_dropout(b)
        m = self.norm_2(x)
        n = self.apply_ffn(attention_mask, m)
        x = x + self.resid_ffn_dropout(n)  # expect: DL201
        return x, attn_weights
