# source: https://github.com/liun-online/HeCo/issues/15
# error: AssertionError: Torch not compiled with CUDA enabled (the sampled neighbour indices are moved with a hard-coded .cuda() in forward)
# bug: the network-schema encoder samples a fixed number of neighbours per node on the host, stacks
#      the sampled index rows and moves them with a hard-coded .cuda() inside forward before the
#      embedding lookup. Training moves the model and features to the GPU only when one is present,
#      so on a CPU-only machine (or a CPU-only build) forward fails at that call. The reporter's fix
#      (issue open, no upstream change) drops the .cuda() or guards it with torch.cuda.is_available();
#      the changed line is marked (DL302: .cuda() hard-coded in a module's forward).
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class IntraAttention(nn.Module):
    def __init__(self, hidden_dim):
        super().__init__()
        self.att = nn.Parameter(torch.empty(1, 2 * hidden_dim))
        nn.init.xavier_normal_(self.att.data, gain=1.414)
        self.act = nn.LeakyReLU()

    def forward(self, nei, h, h_refer):
        nei_emb = F.embedding(nei, h)
        h_refer = h_refer.unsqueeze(1).expand_as(nei_emb)
        scores = self.act(torch.cat([h_refer, nei_emb], dim=-1).matmul(self.att.t()))
        return (torch.softmax(scores, dim=1) * nei_emb).sum(dim=1)


class SchemaEncoder(nn.Module):
    def __init__(self, hidden_dim, sample_rate):
        super().__init__()
        self.sample_rate = sample_rate
        self.intra = nn.ModuleList([IntraAttention(hidden_dim) for _ in sample_rate])

    def forward(self, nei_h, nei_index):
        embeds = []
        for i, sample_num in enumerate(self.sample_rate):
            rows = []
            for neighbours in nei_index[i]:
                if len(neighbours) >= sample_num:
                    picked = random.sample(neighbours, sample_num)
                else:
                    picked = random.choices(neighbours, k=sample_num)
                rows.append(torch.tensor(picked).unsqueeze(0))
            sele_nei = torch.cat(rows, dim=0).cuda()  # expect: DL302
            embeds.append(F.elu(self.intra[i](sele_nei, nei_h[i + 1], nei_h[0])))
        return torch.stack(embeds).mean(dim=0)


class HeCo(nn.Module):
    def __init__(self, in_dims, hidden_dim, sample_rate):
        super().__init__()
        self.fc_list = nn.ModuleList([nn.Linear(d, hidden_dim) for d in in_dims])
        self.sc = SchemaEncoder(hidden_dim, sample_rate)

    def forward(self, feats, nei_index):
        h_all = [F.elu(fc(f)) for fc, f in zip(self.fc_list, feats)]
        return self.sc(h_all, nei_index)


if __name__ == "__main__":
    feats = [torch.randn(6, 5), torch.randn(9, 4), torch.randn(7, 3)]
    nei_index = [[[0, 3, 5], [1], [2, 8, 4, 7], [6, 0], [3, 3], [8]],
                 [[0, 1], [2, 6, 4], [5], [3, 1, 0], [6], [2, 4]]]
    model = HeCo([5, 4, 3], 8, sample_rate=[2, 2])
    if torch.cuda.is_available():
        model.cuda()
        feats = [f.cuda() for f in feats]
    print(model(feats, nei_index).shape)
