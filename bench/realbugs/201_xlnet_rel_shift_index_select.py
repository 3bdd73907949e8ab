# source: https://github.com/huggingface/transformers/issues/769
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #3 'index'
# bug: XLNet's relative shift selects positions with torch.index_select using an index built by
#      torch.arange(klen) on the CPU, while the attention scores x are on the GPU (model run on a GPU).
import torch
import torch.nn as nn


class XLNetRelativeAttention(nn.Module):
    def __init__(self, d_model, n_head, d_head):
        super().__init__()
        self.n_head = n_head
        self.d_head = d_head
        self.scale = 1 / (d_head ** 0.5)
        self.q = nn.Parameter(torch.randn(d_model, n_head, d_head) * 0.02)
        self.k = nn.Parameter(torch.randn(d_model, n_head, d_head) * 0.02)
        self.r = nn.Parameter(torch.randn(d_model, n_head, d_head) * 0.02)
        self.r_w_bias = nn.Parameter(torch.zeros(n_head, d_head))
        self.r_r_bias = nn.Parameter(torch.zeros(n_head, d_head))

    @staticmethod
    def rel_shift(x, klen=-1):
        """Shift the position scores so that column j holds relative distance i - j."""
        x_size = x.shape
        x = x.reshape(x_size[1], x_size[0], x_size[2], x_size[3])
        x = x[1:, ...]
        x = x.reshape(x_size[0], x_size[1] - 1, x_size[2], x_size[3])
        x = torch.index_select(x, 1, torch.arange(klen))  # expect: DL202
        return x

    def rel_attn_core(self, q_head, k_head_h, k_head_r, attn_mask=None):
        ac = torch.einsum("ibnd,jbnd->ijbn", q_head + self.r_w_bias, k_head_h)
        bd = torch.einsum("ibnd,jbnd->ijbn", q_head + self.r_r_bias, k_head_r)
        bd = self.rel_shift(bd, klen=ac.shape[1])
        score = (ac + bd) * self.scale
        if attn_mask is not None:
            score = score - 1e30 * attn_mask
        return torch.softmax(score, dim=1)

    def forward(self, h, pos_emb, attn_mask=None):
        q_head = torch.einsum("ibh,hnd->ibnd", h, self.q)
        k_head_h = torch.einsum("ibh,hnd->ibnd", h, self.k)
        k_head_r = torch.einsum("ibh,hnd->ibnd", pos_emb, self.r)
        return self.rel_attn_core(q_head, k_head_h, k_head_r, attn_mask)


if __name__ == "__main__":
    layer = XLNetRelativeAttention(64, 4, 16).cuda()
    h = torch.randn(12, 8, 64).cuda()
    pos_emb = torch.randn(24, 8, 64).cuda()
    probs = layer(h, pos_emb)
