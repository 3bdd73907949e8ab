# source: https://github.com/tatp22/multidim-positional-encoding/pull/31
# fixed twin: cached_penc is registered as a buffer in every encoding class, so model.to moves a cache filled before the move, as the fix (PR 31, commit 97bf784) does.
import math

import torch
import torch.nn as nn


def get_emb(sin_inp):
    emb = torch.stack((sin_inp.sin(), sin_inp.cos()), dim=-1)
    return torch.flatten(emb, -2, -1)


class PositionalEncoding1D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.org_channels = channels
        channels = int(math.ceil(channels / 2) * 2)
        self.channels = channels
        inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
        self.register_buffer("inv_freq", inv_freq)
        self.register_buffer("cached_penc", None)

    def forward(self, tensor):
        if self.cached_penc is not None and self.cached_penc.shape == tensor.shape:
            return self.cached_penc
        self.cached_penc = None
        batch_size, x, orig_ch = tensor.shape
        pos_x = torch.arange(x, device=tensor.device).type(self.inv_freq.type())
        emb_x = get_emb(torch.einsum("i,j->ij", pos_x, self.inv_freq))
        emb = torch.zeros((x, self.channels), device=tensor.device).type(tensor.type())
        emb[:, : self.channels] = emb_x
        self.cached_penc = emb[None, :, :orig_ch].repeat(batch_size, 1, 1)
        return self.cached_penc


class PositionalEncoding2D(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.org_channels = channels
        channels = int(math.ceil(channels / 4) * 2)
        self.channels = channels
        inv_freq = 1.0 / (10000 ** (torch.arange(0, channels, 2).float() / channels))
        self.register_buffer("inv_freq", inv_freq)
        self.register_buffer("cached_penc", None)

    def forward(self, tensor):
        if self.cached_penc is not None and self.cached_penc.shape == tensor.shape:
            return self.cached_penc
        self.cached_penc = None
        batch_size, x, y, orig_ch = tensor.shape
        pos_x = torch.arange(x, device=tensor.device).type(self.inv_freq.type())
        pos_y = torch.arange(y, device=tensor.device).type(self.inv_freq.type())
        emb_x = get_emb(torch.einsum("i,j->ij", pos_x, self.inv_freq)).unsqueeze(1)
        emb_y = get_emb(torch.einsum("i,j->ij", pos_y, self.inv_freq))
        emb = torch.zeros((x, y, self.channels * 2), device=tensor.device).type(tensor.type())
        emb[:, :, : self.channels] = emb_x
        emb[:, :, self.channels: 2 * self.channels] = emb_y
        self.cached_penc = emb[None, :, :, :orig_ch].repeat(tensor.shape[0], 1, 1, 1)
        return self.cached_penc


class Summer(nn.Module):
    def __init__(self, penc):
        super().__init__()
        self.penc = penc

    def forward(self, tensor):
        penc = self.penc(tensor)
        assert tensor.size() == penc.size()
        return tensor + penc


class PatchModel(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.embed = nn.Linear(4, channels)
        self.pos = Summer(PositionalEncoding2D(channels))
        self.seq_pos = Summer(PositionalEncoding1D(channels))

    def forward(self, patches):
        x = self.pos(self.embed(patches))
        b, h, w, c = x.shape
        return self.seq_pos(x.reshape(b, h * w, c)).mean(1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = PatchModel()
    with torch.no_grad():
        model(torch.zeros(2, 3, 3, 4))  # a shape check on the CPU fills the caches
    model = model.to(device)
    out = model(torch.randn(2, 3, 3, 4, device=device))
    print(out.shape, model.pos.penc.cached_penc.device)
