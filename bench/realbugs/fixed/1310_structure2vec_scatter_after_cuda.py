# source: https://github.com/Hanjun-Dai/pytorch_structure2vec/issues/5
# fixed twin: the tags are scattered on the CPU and the features and labels are moved afterwards, in PrepareFeatureLabel, as commit 848db85 does.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

cmd_args = SimpleNamespace(mode="gpu" if torch.cuda.is_available() else "cpu", feat_dim=5, latent_dim=16, num_class=2)


class S2VGraph:
    def __init__(self, num_nodes, label):
        self.num_nodes = num_nodes
        self.label = label
        self.node_tags = [(i * 7 + label) % cmd_args.feat_dim for i in range(num_nodes)]


class MeanFieldEmbed(nn.Module):
    def __init__(self, num_node_feats, latent_dim):
        super().__init__()
        self.w = nn.Linear(num_node_feats, latent_dim)

    def forward(self, graph_list, node_feat):
        h = torch.relu(self.w(node_feat))
        sizes = [g.num_nodes for g in graph_list]
        return torch.stack([chunk.sum(0) for chunk in torch.split(h, sizes)])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.s2v = MeanFieldEmbed(cmd_args.feat_dim, cmd_args.latent_dim)
        self.mlp = nn.Linear(cmd_args.latent_dim, cmd_args.num_class)

    def PrepareFeatureLabel(self, batch_graph):
        labels = torch.LongTensor(len(batch_graph))
        n_nodes = 0
        concat_feat = []
        for i in range(len(batch_graph)):
            labels[i] = batch_graph[i].label
            n_nodes += batch_graph[i].num_nodes
            concat_feat += batch_graph[i].node_tags
        concat_feat = torch.LongTensor(concat_feat).view(-1, 1)
        node_feat = torch.zeros(n_nodes, cmd_args.feat_dim)
        node_feat.scatter_(1, concat_feat, 1)

        if cmd_args.mode == "gpu":
            node_feat = node_feat.cuda()
            labels = labels.cuda()

        return node_feat, labels

    def forward(self, batch_graph):
        node_feat, labels = self.PrepareFeatureLabel(batch_graph)
        logits = self.mlp(self.s2v(batch_graph, node_feat))
        loss = F.cross_entropy(logits, labels)
        acc = (logits.argmax(1) == labels).float().mean()
        return logits, loss, acc


if __name__ == "__main__":
    classifier = Classifier()
    if cmd_args.mode == "gpu":
        classifier = classifier.cuda()
    optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-3)
    graphs = [S2VGraph(3 + i % 4, i % 2) for i in range(8)]
    _, loss, acc = classifier(graphs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.item(), acc.item())
