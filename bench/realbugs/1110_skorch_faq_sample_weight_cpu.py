# source: https://github.com/skorch-dev/skorch/issues/734
# error: RuntimeError: expected device cpu but got device cuda:0
# bug: the FAQ's recipe for sample weights passes them inside the X dict and overrides get_loss to
#      multiply the unreduced loss by X['sample_weight']. The net moves the batch it feeds the module
#      and the targets to its device, but the X handed to get_loss is the batch as the loader made it,
#      so with device='cuda' the CPU weights meet the CUDA per-sample loss. The fix (commit 6d20ad4,
#      PR 736) converts the weights with to_tensor(..., device=self.device); that line is marked (DL201).
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


def to_tensor(X, device):
    if isinstance(X, dict):
        return {k: to_tensor(v, device) for k, v in X.items()}
    return torch.as_tensor(X).to(device)


class DictDataset(Dataset):
    def __init__(self, X, y):
        self.X, self.y = X, y

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return {k: v[i] for k, v in self.X.items()}, self.y[i]


class NeuralNet:
    def __init__(self, module, criterion, lr=0.1, max_epochs=2, batch_size=64, device="cpu", criterion__reduction="mean"):
        self.module, self.criterion, self.lr = module, criterion, lr
        self.max_epochs, self.batch_size, self.device = max_epochs, batch_size, device
        self.criterion_kwargs = {"reduction": criterion__reduction}

    def initialize(self):
        self.module_ = self.module.to(self.device)
        self.criterion_ = self.criterion(**self.criterion_kwargs).to(self.device)
        self.optimizer_ = torch.optim.SGD(self.module_.parameters(), lr=self.lr)
        return self

    def infer(self, x):
        x = to_tensor(x, device=self.device)
        return self.module_(**x)

    def get_loss(self, y_pred, y_true, X=None, training=False):
        y_true = to_tensor(y_true, device=self.device)
        return self.criterion_(y_pred, y_true)

    def train_step(self, Xi, yi):
        self.optimizer_.zero_grad()
        y_pred = self.infer(Xi)
        loss = self.get_loss(y_pred, yi, X=Xi, training=True)
        loss.backward()
        self.optimizer_.step()
        return loss

    def fit(self, X, y):
        self.initialize()
        for _ in range(self.max_epochs):
            for Xi, yi in DataLoader(DictDataset(X, y), batch_size=self.batch_size, shuffle=True):
                loss = self.train_step(Xi, yi)
        return loss


class MyModule(nn.Module):
    def __init__(self, num_units=10):
        super().__init__()
        self.dense0 = nn.Linear(20, num_units)
        self.output = nn.Linear(num_units, 2)

    def forward(self, X, sample_weight=None):
        return self.output(torch.relu(self.dense0(X)))


class MyNet(NeuralNet):
    def __init__(self, *args, criterion__reduction="none", **kwargs):
        super().__init__(*args, criterion__reduction=criterion__reduction, **kwargs)

    def get_loss(self, y_pred, y_true, X, *args, **kwargs):
        loss_unreduced = super().get_loss(y_pred, y_true, X, *args, **kwargs)
        sample_weight = X["sample_weight"]  # expect: DL201
        loss_reduced = (sample_weight * loss_unreduced).mean()
        return loss_reduced


if __name__ == "__main__":
    X = {"X": torch.randn(256, 20), "sample_weight": torch.randint(1, 3, (256,)).float()}
    y = (X["X"][:, 0] > 0).long()
    net = MyNet(MyModule(), nn.CrossEntropyLoss, device="cuda" if torch.cuda.is_available() else "cpu")
    print(net.fit(X, y).item())
