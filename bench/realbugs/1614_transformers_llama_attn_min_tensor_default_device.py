# source: https://github.com/huggingface/transformers/pull/23538
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:6 and cuda:0! (in LlamaAttention.forward, at torch.max(attn_weights, torch.tensor(...)))
# bug: when an attention mask is given, LLaMA's attention clamps the masked scores from below with
#      torch.max against a scalar tensor made by torch.tensor(finfo.min) with no device; it lands
#      on the default device (the CPU, or cuda:0 under a CUDA default tensor type), not on the
#      scores' GPU, and a 0-dim tensor on a different GPU is rejected. The reporter's model lives on
#      cuda:6. The fix (PR 23538, merged; PR 23534 was its closed first try) passes
#      device=attn_weights.device; the changed line is marked (DL202: a factory without device=
#      meeting the model's tensors).
import math

import torch
import torch.nn as nn


class LlamaAttention(nn.Module):
    def __init__(self, hidden_size=16, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        q = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        attn_weights = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
            attn_weights = torch.max(attn_weights, torch.tensor(torch.finfo(attn_weights.dtype).min))  # expect: DL202
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn_weights, v).transpose(1, 2).reshape(bsz, q_len, -1)
        return self.o_proj(out)


def _prepare_decoder_attention_mask(attention_mask, input_shape, dtype, device):
    bsz, tgt_len = input_shape
    causal = torch.full((tgt_len, tgt_len), torch.finfo(dtype).min, device=device)
    causal = torch.triu(causal, diagonal=1)[None, None]
    expanded = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
    return causal + expanded


class LlamaModel(nn.Module):
    def __init__(self, vocab=32, hidden_size=16, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden_size)
        self.layers = nn.ModuleList([LlamaAttention(hidden_size) for _ in range(layers)])

    def forward(self, input_ids, attention_mask):
        h = self.embed_tokens(input_ids)
        mask = _prepare_decoder_attention_mask(attention_mask, input_ids.shape, h.dtype, h.device)
        for layer in self.layers:
            h = h + layer(h, attention_mask=mask)
        return h


if __name__ == "__main__":
    device = torch.device(f"cuda:{torch.cuda.device_count() - 1}" if torch.cuda.is_available() else "cpu")
    model = LlamaModel().to(device)
    input_ids = torch.tensor([[1, 5, 7, 3]], device=device)
    attention_mask = torch.ones_like(input_ids)
    with torch.no_grad():
        print(model(input_ids, attention_mask).shape)
