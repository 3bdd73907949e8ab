# source: https://github.com/kierensharma/FluxGAT/pull/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (in binary_cross_entropy_with_logits, first training step on a GPU)
# bug: for each cross-validation fold the graph and a fresh model are moved to the device, and the
#      class-balancing pos_weight is computed from the (device) label counts, but wrapped with
#      torch.tensor([...]) without a device, which makes a new CPU tensor. The loss built with it is
#      never moved, so the first loss on the GPU fails. The fix (PR 4, commit 477a833) creates the
#      weight with device=device; that line is marked (DL104: a loss with a CPU weight that is
#      never moved while the model and data are).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Graph:
    def __init__(self, x, edge_index, y, train_mask, test_mask):
        self.x, self.edge_index, self.y = x, edge_index, y
        self.train_mask, self.test_mask = train_mask, test_mask

    def to(self, device):
        return Graph(*(t.to(device) for t in (self.x, self.edge_index, self.y, self.train_mask, self.test_mask)))


class MeanConv(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        deg = torch.zeros(x.size(0), device=x.device).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return self.lin(x + agg / deg.clamp(min=1).unsqueeze(-1))


class FluxGAT(nn.Module):
    def __init__(self, num_features, embedding_dim=16, hidden=16, num_layers=2):
        super().__init__()
        self.embedding = nn.Embedding(num_features, embedding_dim)
        self.conv1 = MeanConv(embedding_dim, hidden)
        self.hidden_layers = nn.ModuleList([MeanConv(hidden, hidden) for _ in range(num_layers - 1)])
        self.fc = nn.Linear(hidden, 1)

    def forward(self, data):
        x = self.embedding(torch.argmax(data.x, dim=1))
        x = F.leaky_relu(self.conv1(x, data.edge_index))
        for layer in self.hidden_layers:
            x = F.leaky_relu(layer(x, data.edge_index))
        return self.fc(x).squeeze(-1)


def train(model, data, optimizer, criterion):
    model.train()
    optimizer.zero_grad()
    out = model(data)
    loss = criterion(out[data.train_mask], data.y[data.train_mask].float())
    loss.backward()
    optimizer.step()
    return loss.item()


def make_folds(n_nodes=40, n_feats=8, folds=2):
    x = F.one_hot(torch.randint(0, n_feats, (n_nodes,)), n_feats).float()
    edge_index = torch.randint(0, n_nodes, (2, 120))
    y = (torch.rand(n_nodes) < 0.25).long()
    for k in range(folds):
        test_mask = torch.arange(n_nodes) % folds == k
        yield Graph(x, edge_index, y, ~test_mask, test_mask)


def main(num_epochs=3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for fold, data in enumerate(make_folds()):
        data = data.to(device)
        model = FluxGAT(num_features=data.x.size(1)).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
        number_of_zeros = (data.y == 0).sum()
        number_of_ones = (data.y == 1).sum()
        weight = torch.tensor([number_of_zeros / number_of_ones])  # expect: DL104
        criterion = nn.BCEWithLogitsLoss(pos_weight=weight)
        for epoch in range(num_epochs):
            loss = train(model, data, optimizer, criterion)
        print(fold, round(loss, 3))


if __name__ == "__main__":
    main()
