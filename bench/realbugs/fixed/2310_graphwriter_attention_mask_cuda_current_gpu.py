# source: https://github.com/rikdz/GraphWriter/issues/9
# fixed twin: each attention module moves its mask and its scale to the device of its own parameters (get_device()), as the accepted fix (PR 10) does.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MatrixAttn(nn.Module):
    def __init__(self, linin, linout):
        super().__init__()
        self.attnlin = nn.Linear(linin, linout)

    def get_device(self):
        dev = next(self.parameters()).get_device()
        if dev == -1:
            return "cpu"
        return dev

    def forward(self, dec, emb):
        emb, elen = emb
        emask = torch.arange(0, emb.size(1)).unsqueeze(0).repeat(emb.size(0), 1).long().to(self.get_device())
        emask = (emask >= elen.unsqueeze(1)).unsqueeze(1)
        unnorm = torch.bmm(self.attnlin(dec), emb.transpose(1, 2))
        unnorm.masked_fill_(emask, -float("inf"))
        attn = F.softmax(unnorm, dim=2)
        return torch.bmm(attn, emb), attn


class MultiHeadAttention(nn.Module):
    def __init__(self, query_dim, key_dim, num_units, h=4):
        super().__init__()
        self._num_units = num_units
        self._h = h
        self._key_dim = torch.tensor(key_dim, requires_grad=False).float()
        self.query_layer = nn.Linear(query_dim, num_units, bias=False)
        self.key_layer = nn.Linear(key_dim, num_units, bias=False)
        self.value_layer = nn.Linear(key_dim, num_units, bias=False)

    def get_device(self):
        dev = next(self.parameters()).get_device()
        if dev == -1:
            return "cpu"
        return dev

    def forward(self, query, keys):
        chunk = self._num_units // self._h
        Q = torch.cat(self.query_layer(query).split(chunk, dim=2), dim=0)
        K = torch.cat(self.key_layer(keys).split(chunk, dim=2), dim=0)
        V = torch.cat(self.value_layer(keys).split(chunk, dim=2), dim=0)
        attention = torch.matmul(Q, K.transpose(1, 2))
        attention = attention / torch.sqrt(self._key_dim).to(self.get_device())
        attention = torch.matmul(F.softmax(attention, dim=-1), V)
        attention = torch.cat(attention.split(attention.size(0) // self._h, dim=0), dim=2)
        return attention + query


class GraphWriter(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.graph_attn = MultiHeadAttention(dim, dim, dim)
        self.dec_attn = MatrixAttn(dim, dim)
        self.out = nn.Linear(2 * dim, 50)

    def forward(self, dec, ents, elen):
        ents = self.graph_attn(ents, ents)
        ctx, _ = self.dec_attn(dec, (ents, elen))
        return self.out(torch.cat([dec, ctx], dim=-1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-gpu", type=int, default=0 if torch.cuda.is_available() else -1)
    args = parser.parse_args()
    device = torch.device("cuda:%d" % args.gpu) if args.gpu >= 0 else torch.device("cpu")
    model = GraphWriter().to(device)
    dec = torch.randn(2, 5, 32, device=device)
    ents = torch.randn(2, 7, 32, device=device)
    elen = torch.tensor([7, 4], device=device)
    print(model(dec, ents, elen).shape)
