# source: https://github.com/baal-org/baal/issues/17
# error: AttributeError: 'list' object has no attribute 'cuda'
# bug: the wrapper moves each batch with data.cuda(), but a dataset whose items are
# ((input_a, input_b), label) collates its data part into a list of two tensors.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class MyDS(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, idx):
        return (torch.randn(3, 20, 20), torch.randn(3, 20, 20)), 5


class ModelWrapper:
    def __init__(self, model, criterion):
        self.model = model
        self.criterion = criterion

    def train_on_batch(self, data, target, optimizer, cuda=False):
        if cuda:
            data, target = data.cuda(), target.cuda()  # expect: DL310
        optimizer.zero_grad()
        output = self.model(data)
        loss = self.criterion(output, target)
        loss.backward()
        optimizer.step()
        return loss

    def train_on_dataset(self, dataset, optimizer, batch_size, epoch, use_cuda):
        self.model.train()
        for _ in range(epoch):
            for data, target in DataLoader(dataset, batch_size, shuffle=True):
                self.train_on_batch(data, target, optimizer, use_cuda)


class TwoInputNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 8, 3)
        self.head = nn.Linear(8, 10)

    def forward(self, pair):
        x = torch.cat(pair, dim=1)
        return self.head(self.conv(x).mean((2, 3)))


net = TwoInputNet().cuda()
wrapper = ModelWrapper(net, nn.CrossEntropyLoss())
wrapper.train_on_dataset(MyDS(), torch.optim.SGD(net.parameters(), lr=0.1), batch_size=2, epoch=1, use_cuda=True)
