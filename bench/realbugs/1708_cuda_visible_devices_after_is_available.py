# source: https://github.com/pytorch/pytorch/issues/23544
# error: (no exception) the job always runs on GPU 0 instead of the GPU picked with --gpu; the CUDA_VISIBLE_DEVICES assignment has no effect
# bug: the training script first asks torch.cuda.is_available() (which initialises CUDA and fixes
#      the set of visible devices for the process) and only then writes the chosen index into
#      CUDA_VISIBLE_DEVICES, so the variable is read too late and "cuda" still means physical GPU 0.
#      The reporter found that swapping the two statements fixes it, and the maintainer's answer
#      says the variable must be set before CUDA is first touched; the assignment is marked
#      (DL303: CUDA_VISIBLE_DEVICES set after CUDA was initialised).
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
    use_cuda = torch.cuda.is_available()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu  # expect: DL303
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
