# source: https://github.com/dougbrion/pytorch-classification-uncertainty/issues/18
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the evidential training loop moves inputs and labels to the GPU and then one-hot encodes the
#      labels with a helper that indexes a CPU identity matrix, torch.eye(num_classes), with them;
#      the result is moved to the device only afterwards. The issue (open; not applied upstream)
#      makes the identity on get_device() inside the helper; that line is marked (DL202).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def get_device():
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def one_hot_embedding(labels, num_classes=10):
    y = torch.eye(num_classes)  # expect: DL202
    return y[labels]


def relu_evidence(y):
    return F.relu(y)


def edl_mse_loss(output, target, epoch_num, num_classes, annealing_step, device=None):
    if not device:
        device = get_device()
    alpha = relu_evidence(output) + 1
    y = target.to(device)
    S = torch.sum(alpha, dim=1, keepdim=True)
    err = torch.sum((y - alpha / S) ** 2, dim=1, keepdim=True)
    var = torch.sum(alpha * (S - alpha) / (S * S * (S + 1)), dim=1, keepdim=True)
    annealing = min(1.0, epoch_num / annealing_step)
    kl_alpha = (alpha - 1) * (1 - y) + 1
    return torch.mean(err + var + annealing * 0.01 * (kl_alpha - 1).sum(dim=1, keepdim=True))


def train_model(model, dataloader, num_classes, criterion, optimizer, num_epochs=1, device=None, uncertainty=False):
    if not device:
        device = get_device()
    for epoch in range(num_epochs):
        model.train()
        for inputs, labels in dataloader:
            inputs = inputs.to(device)
            labels = labels.to(device)
            optimizer.zero_grad()
            if uncertainty:
                y = one_hot_embedding(labels, num_classes)
                y = y.to(device)
                outputs = model(inputs)
                loss = criterion(outputs, y.float(), epoch, num_classes, 10, device)
            else:
                outputs = model(inputs)
                loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())
    return model


if __name__ == "__main__":
    device = get_device()
    model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10)).to(device)
    data = TensorDataset(torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    train_model(model, DataLoader(data, batch_size=8), 10, edl_mse_loss, optimizer, device=device, uncertainty=True)
