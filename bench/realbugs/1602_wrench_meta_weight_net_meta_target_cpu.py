# source: https://github.com/JieyuZ2/wrench/issues/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking arugment for argument target in method wrapper_nll_loss_forward)
# bug: Meta-Weight-Net's fit moves the classifier and the weighting net to the device, and the
#      backbone moves each dict batch's features itself, so the model calls run; the targets of
#      the noisy batch are read from y_train, which fit moved. The clean meta batch's labels,
#      though, are taken straight from the collated batch dict and stay on the CPU, and the
#      cross entropy of the meta model's GPU logits against them fails. The fix (commit 1f989f0)
#      appends .to(device) to the meta target line, which is marked (DL203: a batch entry never
#      moved, reaching a loss with the model's output).
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def cross_entropy_with_probs(input, target, reduction="mean"):
    if target.dim() == 1:
        return F.cross_entropy(input, target.long(), reduction=reduction)
    return -(target * F.log_softmax(input, dim=1)).sum(1).mean()


class WeakDataset(Dataset):
    def __init__(self, n=16, dim=8, n_class=3):
        self.features = torch.randn(n, dim)
        self.labels = torch.randint(0, n_class, (n,)).tolist()
        self.n_class = n_class

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"ids": i, "features": self.features[i], "labels": self.labels[i]}


def sample_batch(loader):
    while True:
        for batch in loader:
            yield batch


class BackBone(nn.Module):
    def __init__(self, dim, n_class):
        super().__init__()
        self.fc = nn.Linear(dim, n_class)

    def forward(self, batch):
        device = self.fc.weight.device
        return self.fc(batch["features"].to(device))


class VNet(nn.Module):
    def __init__(self, hidden_size=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden_size), nn.ReLU(), nn.Linear(hidden_size, 1))

    def forward(self, x):
        return torch.sigmoid(self.net(x))


class MetaWeightNet:
    def fit(self, dataset_train, dataset_valid, device, n_steps=4, lr=0.1):
        y_train = torch.Tensor(dataset_train.labels).to(device)
        model = BackBone(8, dataset_train.n_class)
        self.model = model.to(device)
        vnet = VNet()
        self.vnet = vnet.to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        optimizer_vnet = torch.optim.Adam(vnet.parameters(), lr=1e-3)
        train_loader = DataLoader(dataset_train, batch_size=4, shuffle=True)
        meta_loader = sample_batch(DataLoader(dataset_valid, batch_size=4, shuffle=True))
        step = 0
        for batch in train_loader:
            step += 1
            target = y_train[batch["ids"].to(device)]
            optimizer_vnet.zero_grad()
            meta_model = copy.deepcopy(model)
            cost = cross_entropy_with_probs(meta_model(batch), target, reduction="none")
            cost_v = cost.reshape(len(cost), 1)
            l_f_meta = torch.sum(cost_v * vnet(cost_v.data)) / len(cost_v)
            grads = torch.autograd.grad(l_f_meta, meta_model.parameters(), create_graph=True)
            for p, g in zip(meta_model.parameters(), grads):
                p.data = p.data - lr * g.data
            meta_batch = next(meta_loader)
            outputs = meta_model(meta_batch)
            meta_target = meta_batch["labels"]  # expect: DL203
            meta_loss = cross_entropy_with_probs(outputs, meta_target)
            meta_loss.backward()
            optimizer_vnet.step()
            optimizer.zero_grad()
            cost = cross_entropy_with_probs(model(batch), target, reduction="none")
            cost_v = cost.reshape(len(cost), 1)
            with torch.no_grad():
                w_new = vnet(cost_v.data)
            loss = torch.sum(cost_v * w_new) / len(cost_v)
            loss.backward()
            optimizer.step()
            print(step, loss.item(), meta_loss.item())
            if step >= n_steps:
                break


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    MetaWeightNet().fit(WeakDataset(), WeakDataset(8), device)
