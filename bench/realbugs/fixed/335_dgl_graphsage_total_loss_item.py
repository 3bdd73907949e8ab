# source: https://github.com/dmlc/dgl/issues/5302
# error: none raised: loss.item() synchronises CPU and GPU every mini-batch and keeps the data loader from overlapping with compute
# bug: the example's training loop accumulates the epoch loss with total_loss += loss.item() at
#      every mini-batch; the proposed fix accumulates loss.detach() on the device instead.
import dgl
import dgl.nn as dglnn
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size):
        super().__init__()
        self.layers = nn.ModuleList([dglnn.SAGEConv(in_size, hid_size, "mean"), dglnn.SAGEConv(hid_size, out_size, "mean")])
        self.dropout = nn.Dropout(0.5)

    def forward(self, blocks, x):
        h = x
        for l, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if l != len(self.layers) - 1:
                h = F.relu(h)
                h = self.dropout(h)
        return h


def train(device, g, train_idx, model):
    sampler = dgl.dataloading.NeighborSampler([10, 10])
    train_dataloader = dgl.dataloading.DataLoader(g, train_idx, sampler, device=device, batch_size=1024, shuffle=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=5e-4)
    for epoch in range(10):
        model.train()
        total_loss = torch.zeros((), device=device)
        for it, (input_nodes, output_nodes, blocks) in enumerate(train_dataloader):
            x = blocks[0].srcdata["feat"]
            y = blocks[-1].dstdata["label"]
            y_hat = model(blocks, x)
            loss = F.cross_entropy(y_hat, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.detach()
        print(f"Epoch {epoch:05d} | Loss {total_loss.item() / (it + 1):.4f}")


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = dgl.data.AsNodePredDataset(dgl.data.CoraGraphDataset())
    g = dataset[0].to(device)
    model = SAGE(g.ndata["feat"].shape[1], 256, dataset.num_classes).to(device)
    train(device, g, dataset.train_idx.to(device), model)
