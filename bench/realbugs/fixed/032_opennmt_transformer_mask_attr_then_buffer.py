# source: https://github.com/OpenNMT/OpenNMT-py/pull/240
# error: the subsequent-position mask stayed on the CPU when the Transformer decoder ran on the GPU
# bug: the causal mask is first assigned as a plain attribute and only then passed to
#      register_buffer under the same name; with the attribute already set it never becomes a
#      buffer (current PyTorch raises instead), so .cuda() leaves it on the CPU and forward
#      adds it to the CUDA padding mask.
import numpy as np
import torch
import torch.nn as nn

MAX_SIZE = 5000


class TransformerDecoder(nn.Module):
    def __init__(self, size, dropout, head_count=8, hidden_size=2048):
        super(TransformerDecoder, self).__init__()
        self.self_attn = nn.MultiheadAttention(size, head_count, dropout=dropout, batch_first=True)
        self.context_attn = nn.MultiheadAttention(size, head_count, dropout=dropout, batch_first=True)
        self.feed_forward = nn.Sequential(nn.Linear(size, hidden_size), nn.ReLU(), nn.Linear(hidden_size, size))
        self.dropout = dropout
        mask = self._get_attn_subsequent_mask(MAX_SIZE)
        # register the mask as a buffer so that it follows the decoder to the GPU
        self.register_buffer("mask", mask)

    def forward(self, input, context, src_pad_mask, tgt_pad_mask):
        t_len = tgt_pad_mask.size(1)
        dec_mask = torch.gt(tgt_pad_mask + self.mask[:, :t_len, :t_len].expand_as(tgt_pad_mask), 0)
        query, _ = self.self_attn(input, input, input, attn_mask=dec_mask.repeat_interleave(8, dim=0))
        mid, attn = self.context_attn(query, context, context, attn_mask=src_pad_mask.repeat_interleave(8, dim=0))
        return self.feed_forward(mid), attn

    def _get_attn_subsequent_mask(self, size):
        attn_shape = (1, size, size)
        subsequent_mask = np.triu(np.ones(attn_shape), k=1).astype("uint8")
        subsequent_mask = torch.from_numpy(subsequent_mask)
        return subsequent_mask
