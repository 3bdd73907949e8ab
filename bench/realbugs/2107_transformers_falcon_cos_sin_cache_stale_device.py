# source: https://github.com/huggingface/transformers/pull/26448
# error: RuntimeError: Expected all tensors to be on the same device (Falcon run on the GPU, then moved to the CPU and run on CPU inputs: the cached cos/sin are still on the GPU)
# bug: Falcon's rotary embedding caches its cos/sin tables in plain attributes, rebuilt only
#      when a longer sequence comes; model.to() does not move plain attributes, so after the
#      model changes device a shorter sequence is served from tables on the old device. The fix
#      (PR 26448, merged) inserts a check before the return that moves the cached tables to the
#      requested device. The return line (which the inserted lines precede; the traceback points
#      into forward's products) is marked with DL103 (plain tensor attributes that model.to does
#      not move).
import torch
import torch.nn as nn


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class FalconRotaryEmbedding(nn.Module):
    def __init__(self, head_dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.head_dim = head_dim
        self.seq_len_cached = -1
        self.cos_cached = None
        self.sin_cached = None

    def _set_cos_sin_cache(self, seq_len, device, dtype):
        self.seq_len_cached = seq_len
        t = torch.arange(seq_len, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1).to(device)
        self.cos_cached = emb.cos()[None, :, :].type(dtype)
        self.sin_cached = emb.sin()[None, :, :].type(dtype)

    def cos_sin(self, seq_len, past_key_values_length, device="cpu", dtype=torch.bfloat16):
        total_length = seq_len + past_key_values_length
        if total_length > self.seq_len_cached:
            self._set_cos_sin_cache(total_length, device, dtype)
        return (  # expect: DL103
            self.cos_cached[:, past_key_values_length : seq_len + past_key_values_length],
            self.sin_cached[:, past_key_values_length : seq_len + past_key_values_length],
        )

    def forward(self, query, key, past_key_values_length=0):
        batch, seq_len, head_dim = query.shape
        cos, sin = self.cos_sin(seq_len, past_key_values_length, query.device, query.dtype)
        return (query * cos) + (rotate_half(query) * sin), (key * cos) + (rotate_half(key) * sin)


class FalconAttention(nn.Module):
    def __init__(self, hidden=32, head_dim=16):
        super().__init__()
        self.query_key_value = nn.Linear(hidden, 2 * head_dim + hidden)
        self.maybe_rotary = FalconRotaryEmbedding(head_dim)
        self.head_dim = head_dim

    def forward(self, hidden_states):
        fused = self.query_key_value(hidden_states)
        q, k = fused[..., : self.head_dim], fused[..., self.head_dim : 2 * self.head_dim]
        v = fused[..., 2 * self.head_dim :]
        q, k = self.maybe_rotary(q, k)
        scores = torch.softmax(q @ k.transpose(1, 2) / self.head_dim ** 0.5, dim=-1)
        return scores @ v


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = FalconAttention().to(device)
    with torch.no_grad():
        print(model(torch.randn(2, 12, 32, device=device)).shape)
        model.to("cpu")
        print(model(torch.randn(2, 8, 32)).shape)
