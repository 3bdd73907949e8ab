# source: https://github.com/graphnet-team/graphnet/issues/328
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (in cross_entropy)
# bug: the multiclass cross-entropy loss maps each particle id of the target to a class index in a
#      Python list, rebuilds it with torch.tensor(...) and one-hot encodes it; the new target is a
#      CPU tensor while the predictions come from the model on the GPU. The fix (commit f40ae535,
#      refined in 04a6cd40 to use prediction.device) moves the one-hot target to the predictions'
#      device; that line is marked (DL202).
from abc import abstractmethod

import torch
import torch.nn as nn
from torch.nn.functional import cross_entropy, one_hot


class LossFunction(nn.Module):
    def forward(self, prediction, target, weights=None, return_elements=False):
        elements = self._forward(prediction, target)
        if weights is not None:
            elements = elements * weights
        assert elements.size(dim=0) == target.size(dim=0), "`_forward` should return elementwise loss terms."
        return elements if return_elements else torch.mean(elements)

    @abstractmethod
    def _forward(self, prediction, target):
        """Elementwise loss terms."""


class MultiClassificationCrossEntropyLoss(LossFunction):
    def _forward(self, prediction, target):
        pid_transform = {1: 0, 12: 2, 13: 1, 14: 2, 16: 2}
        target_new = one_hot(torch.tensor([pid_transform[abs(int(value))] for value in target]), 3)  # expect: DL202
        return cross_entropy(prediction.float(), target_new.float(), reduction="none")


class ClassificationTask(nn.Module):
    def __init__(self, hidden_size, loss_function):
        super().__init__()
        self.affine = nn.Linear(hidden_size, 3)
        self.loss_function = loss_function

    def forward(self, x):
        return torch.softmax(self.affine(x), dim=-1)

    def compute_loss(self, pred, target):
        return self.loss_function(pred, target)


class StandardModel(nn.Module):
    def __init__(self, in_features=8, hidden_size=16):
        super().__init__()
        self.gnn = nn.Sequential(nn.Linear(in_features, hidden_size), nn.ReLU())
        self.task = ClassificationTask(hidden_size, MultiClassificationCrossEntropyLoss())

    def forward(self, x):
        return self.task(self.gnn(x))

    def training_step(self, x, pid):
        return self.task.compute_loss(self(x), pid)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = StandardModel().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(6, 8).to(device)
    pid = torch.tensor([1, -12, 13, 14, -16, 13]).to(device)
    loss = model.training_step(x, pid)
    loss.backward()
    optimizer.step()
    print(loss.item())
