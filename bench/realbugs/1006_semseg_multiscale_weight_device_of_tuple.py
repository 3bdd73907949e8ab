# source: https://github.com/meetps/pytorch-semseg/issues/192
# error: AttributeError: 'tuple' object has no attribute 'device'
# bug: the multi-scale loss (auxiliary heads of PSPNet / ICNet in training mode) builds its per-scale
#      weights on the CPU and moves them to the device of `input`, but on this path `input` is the
#      tuple of the heads' outputs, which has no device. (An earlier fix for the same weights, issue
#      122, had moved them with .cuda() when `input.is_cuda`.) The fix (commit 801fb20) takes the device
#      from the target tensor instead (DL310, the closest rule: a tensor device API used on a tuple;
#      no rule covers reading .device from one). The script fails by design on every machine.
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def cross_entropy2d(input, target, weight=None):
    n, c, h, w = input.size()
    nt, ht, wt = target.size()
    if h != ht and w != wt:
        input = F.interpolate(input, size=(ht, wt), mode="bilinear", align_corners=True)
    input = input.permute(0, 2, 3, 1).reshape(-1, c)
    return F.cross_entropy(input, target.view(-1), weight=weight, ignore_index=250)


def multi_scale_cross_entropy2d(input, target, weight=None, scale_weight=None):
    if not isinstance(input, tuple):
        return cross_entropy2d(input=input, target=target, weight=weight)
    if scale_weight is None:
        n_inp = len(input)
        scale = 0.4
        scale_weight = torch.pow(scale * torch.ones(n_inp), torch.arange(n_inp).float()).to(input.device)  # expect: DL310
    loss = 0.0
    for i, inp in enumerate(input):
        loss = loss + scale_weight[i] * cross_entropy2d(input=inp, target=target, weight=weight)
    return loss


def get_loss_function(name):
    return functools.partial({"multi_scale_cross_entropy": multi_scale_cross_entropy2d}[name])


class TinyPSPNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.cls = nn.Conv2d(8, n_classes, 1)
        self.aux = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        f = F.relu(self.body(x))
        out = F.interpolate(self.cls(f), size=x.shape[-2:], mode="bilinear", align_corners=True)
        if self.training:
            return out, self.aux(f)
        return out


def train(steps=2):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyPSPNet().to(device)
    loss_fn = get_loss_function("multi_scale_cross_entropy")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        images = torch.randn(2, 3, 16, 16).to(device)
        labels = torch.randint(0, 3, (2, 16, 16)).to(device)
        optimizer.zero_grad()
        loss = loss_fn(input=model(images), target=labels)
        loss.backward()
        optimizer.step()
    return float(loss)


if __name__ == "__main__":
    print(round(train(), 4))
