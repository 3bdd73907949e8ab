# source: https://github.com/dawnranger/pytorch-AGNN/issues/5
# error: RuntimeError: expected device cpu but got device cuda:0 (at the cosine-attention line of GraphAttentionLayer.forward)
# bug: the attention-guided GNN keeps each propagation layer's temperature beta as a Parameter when
#      it is trained, but the first layer (fixed, not trained) stores a plain one-element tensor made
#      with torch.zeros(1); model.cuda() moves the Parameters and not that attribute, so the first
#      layer multiplies a CPU tensor of shape (1,) (not 0-dim, so PyTorch does not mix it) with the
#      CUDA similarity matrix. No fix was merged; the comment in the thread moves beta to the GPU in
#      that line, which is marked (DL201, the CPU attribute meeting CUDA activations; DL103 is the
#      rule for the unregistered attribute itself).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter


class GraphAttentionLayer(nn.Module):
    def __init__(self, requires_grad=True):
        super().__init__()
        if requires_grad:
            self.beta = Parameter(torch.Tensor(1).uniform_(0, 1), requires_grad=requires_grad)
        else:
            self.beta = torch.zeros(1, requires_grad=requires_grad)

    def forward(self, x, adj):
        norm2 = torch.norm(x, 2, 1).view(-1, 1)
        cos = self.beta * torch.div(torch.mm(x, x.t()), torch.mm(norm2, norm2.t()) + 1e-7)  # expect: DL201
        masked = cos + (1.0 - adj) * -1e9
        return torch.mm(F.softmax(masked, dim=1), x)


class LinearLayer(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = Parameter(nn.init.xavier_uniform_(torch.empty(in_features, out_features)))

    def forward(self, x):
        return torch.mm(x, self.weight)


class AGNN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, nlayers, dropout_rate):
        super().__init__()
        self.layers, self.dropout_rate = nlayers, dropout_rate
        self.embeddinglayer = LinearLayer(nfeat, nhid)
        self.attentionlayers = nn.ModuleList([GraphAttentionLayer(requires_grad=False)])
        for _ in range(1, nlayers):
            self.attentionlayers.append(GraphAttentionLayer())
        self.outputlayer = LinearLayer(nhid, nclass)

    def forward(self, x, adj):
        x = F.dropout(F.relu(self.embeddinglayer(x)), self.dropout_rate, training=self.training)
        for i in range(self.layers):
            x = self.attentionlayers[i](x, adj)
        x = F.dropout(self.outputlayer(x), self.dropout_rate, training=self.training)
        return F.log_softmax(x, dim=1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    features = torch.rand(12, 10)
    adj = (torch.rand(12, 12) > 0.6).float()
    labels = torch.randint(0, 3, (12,))
    model = AGNN(10, 16, 3, nlayers=3, dropout_rate=0.5)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    if args.cuda:
        model.cuda()
        features, adj, labels = features.cuda(), adj.cuda(), labels.cuda()
    model.train()
    optimizer.zero_grad()
    loss = F.nll_loss(model(features, adj), labels)
    loss.backward()
    optimizer.step()
    print(loss.item())
