# source: https://github.com/lyuwenyu/RT-DETR/issues/677
# fixed twin: the positional embedding is registered as a non-persistent buffer, so it moves with the module, and the per-call copy is dropped, as the fix (PR 679, commit f64c0e1) does.
import copy

import torch
import torch.nn as nn


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model, nhead=2, dim_feedforward=32):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, batch_first=True)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    @staticmethod
    def with_pos_embed(tensor, pos_embed):
        return tensor if pos_embed is None else tensor + pos_embed

    def forward(self, src, pos_embed=None):
        q = k = self.with_pos_embed(src, pos_embed)
        src = self.norm1(src + self.self_attn(q, k, value=src)[0])
        return self.norm2(src + self.linear2(torch.relu(self.linear1(src))))


class HybridEncoder(nn.Module):
    def __init__(self, in_channels=(8, 16), feat_strides=(8, 16), hidden_dim=16, use_encoder_idx=(1,),
                 pe_temperature=10000.0, eval_spatial_size=(64, 64)):
        super().__init__()
        self.in_channels = in_channels
        self.feat_strides = feat_strides
        self.hidden_dim = hidden_dim
        self.use_encoder_idx = use_encoder_idx
        self.pe_temperature = pe_temperature
        self.eval_spatial_size = eval_spatial_size
        self.input_proj = nn.ModuleList([nn.Conv2d(c, hidden_dim, 1, bias=False) for c in in_channels])
        layer = TransformerEncoderLayer(hidden_dim)
        self.encoder = nn.ModuleList([copy.deepcopy(layer) for _ in use_encoder_idx])
        self._reset_parameters()

    def _reset_parameters(self):
        if self.eval_spatial_size:
            for idx in self.use_encoder_idx:
                stride = self.feat_strides[idx]
                pos_embed = self.build_2d_sincos_position_embedding(
                    self.eval_spatial_size[1] // stride, self.eval_spatial_size[0] // stride,
                    self.hidden_dim, self.pe_temperature)
                self.register_buffer(f"pos_embed{idx}", pos_embed, persistent=False)

    @staticmethod
    def build_2d_sincos_position_embedding(w, h, embed_dim=256, temperature=10000.0):
        grid_w, grid_h = torch.meshgrid(torch.arange(int(w), dtype=torch.float32),
                                        torch.arange(int(h), dtype=torch.float32), indexing="ij")
        pos_dim = embed_dim // 4
        omega = 1.0 / (temperature ** (torch.arange(pos_dim, dtype=torch.float32) / pos_dim))
        out_w = grid_w.flatten()[..., None] @ omega[None]
        out_h = grid_h.flatten()[..., None] @ omega[None]
        return torch.concat([out_w.sin(), out_w.cos(), out_h.sin(), out_h.cos()], dim=1)[None, :, :]

    def forward(self, feats):
        proj_feats = [self.input_proj[i](feat) for i, feat in enumerate(feats)]
        for i, enc_ind in enumerate(self.use_encoder_idx):
            h, w = proj_feats[enc_ind].shape[2:]
            src_flatten = proj_feats[enc_ind].flatten(2).permute(0, 2, 1)
            if self.training or self.eval_spatial_size is None:
                pos_embed = self.build_2d_sincos_position_embedding(
                    w, h, self.hidden_dim, self.pe_temperature).to(src_flatten.device)
            else:
                pos_embed = getattr(self, f"pos_embed{enc_ind}", None)
            memory = self.encoder[i](src_flatten, pos_embed=pos_embed)
            proj_feats[enc_ind] = memory.permute(0, 2, 1).reshape(-1, self.hidden_dim, h, w).contiguous()
        return proj_feats


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = HybridEncoder().to(device).eval()
    feats = [torch.randn(1, 8, 8, 8, device=device), torch.randn(1, 16, 4, 4, device=device)]
    with torch.no_grad():
        outs = model(feats)
    print([o.shape for o in outs], model.pos_embed1.device, "pos_embed1" in dict(model.named_buffers()))
