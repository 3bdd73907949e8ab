# source: https://github.com/neu-vi/ezflow/issues/46
# fixed twin: each tensor of the batch list is moved to the device on its own, as the issue proposes.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class FlowDataset(Dataset):
    def __init__(self, n=8, train=True):
        self.n, self.train = n, train

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        img1, img2 = torch.rand(3, 16, 16), torch.rand(3, 16, 16)
        if self.train:
            return img1, img2, torch.rand(2, 16, 16)
        return img1, img2


class DeviceDataLoader:
    def __init__(self, data_loader, device):
        self.data_loader = data_loader
        self.device = device

    def __iter__(self):
        for batch in self.data_loader:
            yield [tensor.to(self.device) for tensor in batch]

    def __len__(self):
        return len(self.data_loader)


class TinyFlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(6, 2, 3, padding=1)

    def forward(self, img1, img2):
        return self.net(torch.cat([img1, img2], 1))


def train(model, loader, device):
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters())
    for img1, img2, flow in DeviceDataLoader(loader, device):
        loss = (model(img1, img2) - flow).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(train(TinyFlowNet(), DataLoader(FlowDataset(), batch_size=4), device))
