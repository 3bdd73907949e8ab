# source: https://github.com/vllm-project/vllm/pull/43844
# fixed twin: forward moves each slice of the position table to the input's device and dtype (PR 43844).
import torch
import torch.nn as nn


def get_2d_sincos_pos_embed(embed_dim, grid_size):
    h, w = grid_size
    grid_h, grid_w = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
    omega = 1.0 / 10000 ** (torch.arange(embed_dim // 4, dtype=torch.float32) / (embed_dim / 4))
    parts = []
    for grid in (grid_w, grid_h):
        out = grid[..., None] * omega
        parts.extend([out.sin(), out.cos()])
    return torch.cat(parts, dim=-1)


class Resampler2_5(nn.Module):
    def __init__(self, num_queries=4, embed_dim=16, num_heads=2, kv_dim=24, max_size=(6, 6)):
        super().__init__()
        self.embed_dim = embed_dim
        self.query = nn.Parameter(torch.randn(num_queries, embed_dim) * 0.02)
        self.kv_proj = nn.Linear(kv_dim, embed_dim, bias=False)
        self.attn = nn.MultiheadAttention(embed_dim, num_heads)
        self.max_size = list(max_size)
        self._set_2d_pos_cache(self.max_size)

    def _set_2d_pos_cache(self, max_size, device="cpu"):
        pos_embed = get_2d_sincos_pos_embed(self.embed_dim, max_size).float().to(device)
        self.register_buffer("pos_embed", pos_embed, persistent=False)

    def _adjust_pos_cache(self, tgt_sizes, device):
        max_h = int(tgt_sizes[:, 0].max())
        max_w = int(tgt_sizes[:, 1].max())
        if max_h > self.max_size[0] or max_w > self.max_size[1]:
            self.max_size = [max(max_h, self.max_size[0]), max(max_w, self.max_size[1])]
            self._set_2d_pos_cache(self.max_size, device)

    def forward(self, x, tgt_sizes):
        bs = x.shape[0]
        device, dtype = x.device, x.dtype
        patch_len = tgt_sizes[:, 0] * tgt_sizes[:, 1]
        self._adjust_pos_cache(tgt_sizes, device=device)
        max_patch_len = int(patch_len.max())
        key_padding_mask = torch.zeros((bs, max_patch_len), dtype=torch.bool, device=device)
        pos_embed = []
        for i in range(bs):
            tgt_h, tgt_w = tgt_sizes[i].tolist()
            pos_embed.append(self.pos_embed[:tgt_h, :tgt_w, :].reshape((tgt_h * tgt_w, -1)).to(device=device, dtype=dtype))
            key_padding_mask[i, patch_len[i]:] = True
        pos_embed = nn.utils.rnn.pad_sequence(pos_embed, batch_first=True).permute(1, 0, 2)
        x = self.kv_proj(x).permute(1, 0, 2)
        q = self.query.unsqueeze(1).repeat(1, bs, 1)
        return self.attn(q, x + pos_embed, x, key_padding_mask=key_padding_mask)[0].permute(1, 0, 2)


def load_model(device):
    # vLLM's loader: modules are built with the target device as default device, then weights load in place
    with torch.device(device):
        model = Resampler2_5()
    return model.eval()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resampler = load_model(device)
    tgt_sizes = torch.tensor([[4, 5], [3, 3]])
    features = torch.randn(2, 20, 24, device=device)
    with torch.no_grad():
        print(resampler(features, tgt_sizes).shape)
