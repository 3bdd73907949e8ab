# source: https://github.com/inyeoplee77/SAGPool/issues/3
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for argument #2 'mat2'
# bug: after early stopping, the script rebuilds the network to reload the best weights for the
#      test set, but the new instance stays on the CPU while test() still moves each graph batch to
#      args.device (cuda:0 when available). Commit 4988acd builds it with Net(args).to(args.device).
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.data import DataLoader
from torch_geometric.datasets import TUDataset
from torch_geometric.nn import global_mean_pool

parser = argparse.ArgumentParser()
parser.add_argument("--nhid", type=int, default=128)
args = parser.parse_args()
args.device = "cuda:0" if torch.cuda.is_available() else "cpu"
dataset = TUDataset("data/DD", name="DD")
args.num_features, args.num_classes = dataset.num_features, dataset.num_classes


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.lin1 = nn.Linear(args.num_features, args.nhid)
        self.lin2 = nn.Linear(args.nhid, args.num_classes)

    def forward(self, data):
        x = F.relu(self.lin1(data.x))
        return F.log_softmax(self.lin2(global_mean_pool(x, data.batch)), dim=-1)


def test(model, loader):
    model.eval()
    correct = 0.0
    for data in loader:
        data = data.to(args.device)
        out = model(data)
        correct += out.max(dim=1)[1].eq(data.y).sum().item()
    return correct / len(loader.dataset)


train_loader = DataLoader(dataset[:800], batch_size=128, shuffle=True)
test_loader = DataLoader(dataset[800:], batch_size=1, shuffle=False)
model = Net(args).to(args.device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.0005, weight_decay=0.0001)
for epoch in range(100):
    model.train()
    for data in train_loader:
        data = data.to(args.device)
        loss = F.nll_loss(model(data), data.y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.save(model.state_dict(), "latest.pth")

model = Net(args).to(args.device)
model.load_state_dict(torch.load("latest.pth"))
print("Test accuracy:{}".format(test(model, test_loader)))
