# source: https://github.com/TadaoYamaoka/DeepLearningShogi/issues/40
# fixed twin: no set_device; the device names the chosen GPU (torch.device(f"cuda:{args.gpu}")), as commit 274bd94 does.
import argparse
from concurrent.futures import ThreadPoolExecutor

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", "-g", type=int, default=0, help="GPU ID")
parser.add_argument("--batchsize", type=int, default=8)
args = parser.parse_args()

if args.gpu >= 0 and torch.cuda.is_available():
    device = torch.device(f"cuda:{args.gpu}")
else:
    device = torch.device("cpu")


class PolicyValueNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1_1 = nn.Conv2d(4, 16, 3, padding=1)
        self.l1_2 = nn.Conv2d(2, 16, 1)
        self.policy = nn.Linear(16 * 81, 20)
        self.value = nn.Linear(16 * 81, 1)

    def forward(self, x1, x2):
        h = F.relu(self.l1_1(x1) + self.l1_2(x2)).flatten(1)
        return self.policy(h), self.value(h)


model = PolicyValueNetwork()
model.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)


def decode_positions(positions, features1, features2, move, result):
    features1.copy_(torch.rand(features1.shape))
    features2.copy_(torch.rand(features2.shape))
    move.copy_(torch.tensor([p % 20 for p in positions]))
    result.copy_(torch.tensor([[float(p % 2)] for p in positions]))


class DataLoader:
    def __init__(self, data, batch_size):
        self.data = data
        self.batch_size = batch_size
        self.pin = torch.cuda.is_available()
        self.i = 0
        self.executor = ThreadPoolExecutor(max_workers=1)

    def mini_batch(self, positions):
        n, pin = len(positions), self.pin
        features1 = torch.empty((n, 4, 9, 9), pin_memory=pin)
        features2 = torch.empty((n, 2, 9, 9), pin_memory=pin)
        move = torch.empty((n,), dtype=torch.int64, pin_memory=pin)
        result = torch.empty((n, 1), pin_memory=pin)
        decode_positions(positions, features1, features2, move, result)
        return (features1.to(device),
                features2.to(device),
                move.to(device),
                result.to(device))

    def pre_fetch(self):
        positions = self.data[self.i:self.i + self.batch_size]
        if len(positions) == 0:
            return
        self.i += self.batch_size
        self.f = self.executor.submit(self.mini_batch, positions)

    def __iter__(self):
        self.i = 0
        self.pre_fetch()
        return self

    def __next__(self):
        if self.i >= len(self.data) - self.batch_size + 1:
            raise StopIteration()
        result = self.f.result()
        self.pre_fetch()
        return result


train_dataloader = DataLoader(list(range(64)), args.batchsize)
for x1, x2, t1, t2 in train_dataloader:
    model.train()
    y1, y2 = model(x1, x2)
    loss = F.cross_entropy(y1, t1) + F.binary_cross_entropy_with_logits(y2, t2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
