# source: https://github.com/mattiasegu/uncertainty_estimation_deep_learning/pull/4
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the CIFAR-10 evaluation script picks 'cuda' or 'cpu', builds the network on that device
#      (DataParallel on the GPU) and resumes the checkpoint that training saved from the GPU with
#      torch.load(ckpt_path) and no map_location, so on a CPU-only machine the load fails. The
#      merged PR passes map_location=torch.device(device); its second one-liner, stripping the
#      'module.' prefix that DataParallel put in the saved keys, is a key fix, not a device one,
#      and is kept in both files here. The torch.load line is marked (DL301).
import os
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn


class ResNetDropout(nn.Module):
    def __init__(self, p=0.2):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.drop = nn.Dropout(p)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.drop(self.features(x).flatten(1)))


def train_and_save(ckpt_dir, device):
    net = ResNetDropout().to(device)
    if device == "cuda":
        net = nn.DataParallel(net)
    torch.save({"net": net.state_dict(), "acc": 55.0, "epoch": 3}, os.path.join(ckpt_dir, "ckpt_resnet18_dropout.pth"))


def evaluate(net, device):
    net.eval()
    inputs = torch.randn(4, 3, 32, 32).to(device)
    with torch.no_grad():
        return net(inputs).softmax(1).max(1)[0].mean().item()


def main(ckpt_dir):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = ResNetDropout().to(device)
    if device == "cuda":
        net = nn.DataParallel(net)

    ckpt_path = os.path.join(ckpt_dir, "ckpt_resnet18_dropout.pth")
    checkpoint = torch.load(ckpt_path)  # expect: DL301
    state_dict = checkpoint["net"]
    if device == "cpu":
        state_dict = OrderedDict((k[7:] if k.startswith("module.") else k, v) for k, v in state_dict.items())
    net.load_state_dict(state_dict)
    print("epoch", checkpoint["epoch"], "best_acc", checkpoint["acc"])
    print("mean confidence", evaluate(net, device))


if __name__ == "__main__":
    d = tempfile.mkdtemp()
    train_and_save(d, "cuda" if torch.cuda.is_available() else "cpu")
    main(d)
