# source: https://github.com/vmarinowski/infini-attention/pull/1
# error: RuntimeError: Expected all tensors to be on the same device (memory/z on cpu, queries on cuda)
# bug: the compressive memory and its normaliser are created with torch.zeros inside forward,
#      without a device, so on a GPU they stay on the CPU and the first matmul with the
#      CUDA queries fails.
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, seq_len: int, emb_dim: int, d_head: int, n_head: int, n_segments: int,
                 is_causal: Optional[bool] = True, device: Optional[str] = "cpu"):
        super().__init__()
        self.seq_len = seq_len
        self.n_segments = n_segments
        self.n_head = n_head
        self.emb_dim = emb_dim
        self.d_head = d_head
        self.is_causal = is_causal
        self.device = device

        self.beta = nn.Parameter(torch.ones((1,), device=device))
        self.q = nn.Linear(emb_dim, emb_dim, device=device)
        self.k = nn.Linear(emb_dim, emb_dim, device=device)
        self.v = nn.Linear(emb_dim, emb_dim, device=device)
        self.o = nn.Linear(emb_dim, emb_dim, device=device)
        self.elu = nn.ELU()
        segment = seq_len // n_segments
        self.register_buffer("causal", torch.tril(torch.ones(segment, segment, device=device)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch_size, _, _ = x.size()
        # no initialisation is given for these, so they start from zero
        memory = torch.zeros((self.n_head, self.d_head, self.d_head)).to(self.device)
        z = torch.zeros((self.n_head, self.d_head, 1)).to(self.device)

        shape = (batch_size, self.n_head, self.n_segments, self.seq_len // self.n_segments, self.d_head)
        query = self.q(x).view(shape)
        key = self.k(x).view(shape)
        value = self.v(x).view(shape)

        output = []
        for idx in range(self.n_segments):
            sigma_q = self.elu(query[:, :, idx]) + 1.0
            sigma_k = self.elu(key[:, :, idx]) + 1.0
            A_mem = (sigma_q @ memory) / ((sigma_q @ z) + 1e-6)

            A_dot = query[:, :, idx] @ key[:, :, idx].transpose(-2, -1)
            if self.is_causal:
                A_dot.masked_fill_(self.causal == 0, float("-inf"))
            A_dot = F.softmax(A_dot / torch.sqrt(torch.tensor(self.d_head)), dim=-1) @ value[:, :, idx]

            attention = F.sigmoid(self.beta) * A_mem + (1 - F.sigmoid(self.beta)) * A_dot
            memory = memory + sigma_k.transpose(-2, -1) @ value[:, :, idx]
            z = z + sigma_k.sum(dim=-2, keepdim=True)
            output.append(attention)

        attention = torch.concat(output, dim=2).view(batch_size, self.seq_len, self.emb_dim)
        return self.o(attention)
