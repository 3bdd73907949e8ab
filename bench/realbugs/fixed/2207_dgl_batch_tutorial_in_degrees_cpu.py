# source: https://github.com/dmlc/dgl/issues/1594
# fixed twin: the degrees are moved to the device of the classifier's layers before the first layer (the workaround the maintainer's answer points to).
import torch
import torch.nn as nn
import torch.nn.functional as F


class DGLGraph:
    def __init__(self, src, dst, num_nodes):
        self._src, self._dst, self._n = src, dst, num_nodes
        self.ndata = {}

    def in_degrees(self):
        return torch.bincount(self._dst, minlength=self._n)

    def to(self, device):
        self.ndata = {k: v.to(device) for k, v in self.ndata.items()}
        return self

    def mean_nodes(self, key):
        return self.ndata[key].mean(dim=0, keepdim=True)


class GCNLayer(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.linear = nn.Linear(in_feats, out_feats)

    def forward(self, g, h):
        return F.relu(self.linear(h))


class Classifier(nn.Module):
    def __init__(self, in_dim, hidden_dim, n_classes):
        super().__init__()
        self.layers = nn.ModuleList([GCNLayer(in_dim, hidden_dim), GCNLayer(hidden_dim, hidden_dim)])
        self.classify = nn.Linear(hidden_dim, n_classes)

    def forward(self, g):
        h = g.in_degrees().view(-1, 1).float().to(self.classify.weight.device)
        for conv in self.layers:
            h = conv(g, h)
        g.ndata["h"] = h
        return self.classify(g.mean_nodes("h"))


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = Classifier(1, 16, 3).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(3):
        g = DGLGraph(torch.randint(0, 10, (30,)), torch.randint(0, 10, (30,)), 10).to(device)
        label = torch.randint(0, 3, (1,)).to(device)
        loss = F.cross_entropy(model(g), label)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())
