# source: https://github.com/cv-lee/BraTs/pull/10
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: when resuming, load_model builds SGD from the CPU network and restores its momentum state
#      from the checkpoint (cast to the parameters' device, the CPU); only afterwards is the network
#      moved with .cuda(), so optimizer.step() mixes CPU state with CUDA grads. The fix moves every
#      state tensor of the optimizer to the GPU right after loading it.
import os

import torch
import torch.nn as nn
from torch.optim import SGD


class Checkpoint:
    def __init__(self, model, optimizer=None, epoch=0, best_score=1):
        self.model = model
        self.optimizer = optimizer
        self.epoch = epoch
        self.best_score = best_score

    def load(self, path):
        checkpoint = torch.load(path)
        self.model.load_state_dict(checkpoint["model_state"])
        self.epoch = checkpoint["epoch"]
        self.best_score = checkpoint["best_score"]
        if self.optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer_state"])  # expect: DL407


def load_model(ckpt_root, lr=1e-2, resume=True, device="cuda"):
    net = nn.Sequential(nn.Conv2d(4, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 4, 1))
    optimizer = SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    start_epoch = 1
    if resume:
        checkpoint = Checkpoint(net, optimizer)
        checkpoint.load(os.path.join(ckpt_root, "unet.tar"))
        start_epoch = checkpoint.epoch + 1
    if device == "cuda":
        net.cuda()
        net = nn.DataParallel(net)
    return net, optimizer, start_epoch


if __name__ == "__main__":
    net, optimizer, start_epoch = load_model("ckpt")
    x = torch.randn(2, 4, 32, 32).cuda()
    loss = net(x).mean()
    loss.backward()
    optimizer.step()
