# source: https://github.com/opendataval/opendataval/pull/37
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the torch prediction models move each training batch and the prediction input to their own
#      device and return predictions there, while the experiment keeps its test labels on the CPU;
#      the bin-removal experiment hands both straight to the metric (metric(y_hat, y_test)), whose
#      argmax comparison / mse_loss mixes the devices when the model runs on a GPU. The pull request
#      (open; closes issue 16) inserts b = b.to(a.device) at the top of each metric. The markers are
#      on the lines the inserted line precedes in the two metrics reproduced here (DL201: GPU
#      predictions meet host labels).
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def accuracy(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a.argmax(dim=1) == b.argmax(dim=1)).float().mean().item()  # expect: DL201


def neg_mse(a: torch.Tensor, b: torch.Tensor) -> float:
    return -F.mse_loss(a, b).item()  # expect: DL201


class TorchPredictMixin(nn.Module):
    @property
    def device(self):
        return next(self.parameters()).device

    def clone(self):
        return copy.deepcopy(self)

    def fit(self, x_train, y_train, epochs=3, batch_size=16, lr=0.01):
        optimizer = torch.optim.Adam(self.parameters(), lr=lr)
        self.train()
        for _ in range(epochs):
            for start in range(0, len(x_train), batch_size):
                x_batch = x_train[start:start + batch_size].to(device=self.device)
                y_batch = y_train[start:start + batch_size].to(device=self.device)
                optimizer.zero_grad()
                loss = F.binary_cross_entropy(self(x_batch), y_batch)
                loss.backward()
                optimizer.step()
        return self

    def predict(self, x):
        self.eval()
        x = x.to(device=self.device)
        with torch.no_grad():
            return self(x)


class ClassifierMLP(TorchPredictMixin):
    def __init__(self, input_dim, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(input_dim, 16), nn.ReLU(), nn.Linear(16, num_classes))

    def forward(self, x):
        return F.softmax(self.net(x), dim=-1)


def increasing_bin_removal(data_values, model, x_train, y_train, x_test, y_test, bin_size=20, metric=accuracy):
    curr_model = model.clone()
    num_points = len(data_values)
    bins_indices = [*range(5, num_points - 1, bin_size), num_points - 1]
    sorted_indices = torch.argsort(data_values)
    perf = []
    for bin_end in bins_indices:
        coalition = sorted_indices[:bin_end]
        new_model = curr_model.clone()
        new_model.fit(x_train[coalition], y_train[coalition])
        y_hat = new_model.predict(x_test)
        perf.append(metric(y_hat, y_test))
    return perf


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x_train, x_test = torch.randn(100, 6), torch.randn(30, 6)
    y_train = F.one_hot(torch.randint(0, 2, (100,)), 2).float()
    y_test = F.one_hot(torch.randint(0, 2, (30,)), 2).float()
    model = ClassifierMLP(6, 2).to(device)
    data_values = torch.rand(100)
    print(increasing_bin_removal(data_values, model, x_train, y_train, x_test, y_test))
    print(increasing_bin_removal(data_values, model, x_train, y_train, x_test, y_test, metric=neg_mse))
