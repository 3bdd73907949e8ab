# source: https://github.com/bamsumit/slayerPytorch/pull/46
# error: AttributeError: 'DataParallel' object has no attribute 'slayer' (training assistant with dataParallel=True)
# bug: the training assistant takes the device to move every batch to from the network's SLAYER kernel
#      buffer, read through `net`; with several GPUs the network is wrapped in nn.DataParallel, which
#      does not forward attribute lookups to the wrapped module, so the device cannot be found (the
#      assistant already keeps the unwrapped module for exactly this). The fix (commit e3943a9) reads
#      the device through self.module (DL205, the closest rule: a DataParallel-wrapped model's device
#      handling; no rule covers reading a device through the wrapper).
import torch
import torch.nn as nn


class SlayerKernels(nn.Module):
    def __init__(self, length=5):
        super().__init__()
        self.register_buffer("srmKernel", torch.exp(-torch.arange(length, dtype=torch.float)))


class Network(nn.Module):
    def __init__(self):
        super().__init__()
        self.slayer = SlayerKernels()
        self.fc = nn.Linear(10, 3)
        self.countLog = False

    def forward(self, x):
        return self.fc(x) * self.slayer.srmKernel.sum()

    def clamp(self):
        self.fc.weight.data.clamp_(-1, 1)


class Assistant:
    def __init__(self, net, train_loader, error, optimizer, dataParallel=False):
        self.net = net
        self.module = net.module if dataParallel is True else net
        self.error = error
        self.device = net.slayer.srmKernel.device  # expect: DL205
        self.optimizer = optimizer
        self.train_loader = train_loader

    def train(self):
        for input, target in self.train_loader:
            self.net.train()
            input = input.to(self.device)
            target = target.to(self.device)
            output = self.net.forward(input)
            loss = self.error(output, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.module.clamp()
        return float(loss)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.DataParallel(Network().to(device))
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    loader = [(torch.randn(4, 10), torch.randn(4, 3)) for _ in range(3)]
    assist = Assistant(net, loader, nn.functional.mse_loss, optimizer, dataParallel=True)
    print(round(assist.train(), 4))
