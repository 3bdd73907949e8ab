# source: https://github.com/pytorch/pytorch/issues/23544
# fixed twin: the chosen GPU is written into CUDA_VISIBLE_DEVICES before torch.cuda.is_available() is first called, the order the reporter and the maintainer give.
import argparse
import os

import torch
import torch.nn as nn


def parse_args(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", default="1")
    p.add_argument("--epochs", type=int, default=2)
    return p.parse_args(argv)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x):
        return self.fc(x)


def main(argv=None):
    args = parse_args(argv)
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")

    model = Net().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 10, device=device)
    y = torch.randint(0, 2, (32,), device=device)
    for epoch in range(args.epochs):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(device, round(loss.item(), 3))


if __name__ == "__main__":
    main([])
