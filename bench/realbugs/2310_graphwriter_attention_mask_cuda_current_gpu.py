# source: https://github.com/rikdz/GraphWriter/issues/9
# error: (no message quoted; the reporter: attention on cuda:1 meets torch.sqrt(self._key_dim) moved to cuda:0) - on a CPU-only machine: AssertionError: Torch not compiled with CUDA enabled
# bug: the graph-to-text model's attention modules build helper tensors and move them with a bare
#      .cuda(): the entity mask of MatrixAttn (made with torch.arange) and the sqrt(d_k) scale of
#      MultiHeadAttention (a tensor attribute made in __init__). The training script places the
#      model on the GPU chosen by its arguments (or the CPU); on any device but cuda:0 the helpers
#      land on the current GPU instead and meet the attention scores on another device. The
#      maintainer accepted the reporter's fix (PR 10): each module moves them to the device of its
#      own parameters. Both changed lines are marked (DL302: hard-coded CUDA in a module's
#      forward). On a CPU-only machine this file fails at the first .cuda(), as the issue says.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MatrixAttn(nn.Module):
    def __init__(self, linin, linout):
        super().__init__()
        self.attnlin = nn.Linear(linin, linout)

    def forward(self, dec, emb):
        emb, elen = emb
        emask = torch.arange(0, emb.size(1)).unsqueeze(0).repeat(emb.size(0), 1).long().cuda()  # expect: DL302
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

    def forward(self, query, keys):
        chunk = self._num_units // self._h
        Q = torch.cat(self.query_layer(query).split(chunk, dim=2), dim=0)
        K = torch.cat(self.key_layer(keys).split(chunk, dim=2), dim=0)
        V = torch.cat(self.value_layer(keys).split(chunk, dim=2), dim=0)
        attention = torch.matmul(Q, K.transpose(1, 2))
        attention = attention / torch.sqrt(self._key_dim).cuda()  # expect: DL302
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
