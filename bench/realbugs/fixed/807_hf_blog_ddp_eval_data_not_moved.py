# source: https://github.com/huggingface/blog/pull/1863
# fixed twin: the test loop moves data and target to the device, as the PR does.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class BasicNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(28 * 28, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x.flatten(1)))), dim=1)


def make_loader():
    return DataLoader(TensorDataset(torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))), batch_size=16)


if __name__ == "__main__":
    device = "cuda"
    train_loader, test_loader = make_loader(), make_loader()
    model = BasicNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        loss = F.nll_loss(model(data), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    print(f"Accuracy: {100. * correct / len(test_loader.dataset)}")
