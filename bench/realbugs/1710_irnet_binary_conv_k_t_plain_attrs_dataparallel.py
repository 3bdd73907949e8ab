# source: https://github.com/htqin/IR-Net/issues/19
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (in the binary quantizer's backward, grad_input = k * t * ..., training with DataParallel on two GPUs)
# bug: the binarised convolution keeps its quantizer constants k and t as plain tensor attributes
#      created on the (first) GPU in __init__, and the trainer overwrites them every epoch with
#      new plain tensors moved with .cuda(). DataParallel replicates only parameters and buffers,
#      so the replica on GPU 1 still holds GPU-0 tensors and the quantizer mixes them with its
#      GPU-1 input. The issue is closed without an upstream change (a commenter's workaround moves
#      the constants to the input's device in forward): no twin. The two attribute definitions are
#      marked (DL103: a module's plain tensor attribute, not moved by model.to nor replicated);
#      the trainer's per-epoch re-assignments keep them plain and are left unmarked. (The original
#      calls .cuda() unconditionally; here the device falls back to the CPU so that the file runs.)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class BinaryQuantize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k, t):
        ctx.save_for_backward(x, k, t)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, k, t = ctx.saved_tensors
        grad_input = k * t * (1 - torch.pow(torch.tanh(x * t), 2)) * grad_output
        return grad_input, None, None


class IRConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=False):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias=bias)
        self.k = torch.tensor([10.0]).to(DEVICE)  # expect: DL103
        self.t = torch.tensor([0.1]).to(DEVICE)  # expect: DL103

    def forward(self, x):
        w = self.weight
        bw = w - w.view(w.size(0), -1).mean(-1).view(-1, 1, 1, 1)
        bw = bw / bw.view(bw.size(0), -1).std(-1).view(-1, 1, 1, 1)
        scale = torch.pow(torch.full((bw.size(0),), 2.0, device=bw.device),
                          (torch.log(bw.abs().view(bw.size(0), -1).mean(-1)) / math.log(2)).round()).view(-1, 1, 1, 1).detach()
        bw = BinaryQuantize.apply(bw, self.k, self.t) * scale
        ba = BinaryQuantize.apply(x, self.k, self.t)
        return F.conv2d(ba, bw, self.bias, self.stride, self.padding)


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = nn.Sequential(IRConv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Hardtanh())
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.block(self.stem(x))
        return self.fc(x.mean((2, 3)))


def cpt_tk(epoch, epochs):
    t_min, t_max = torch.tensor([0.1]), torch.tensor([10.0])
    t = t_min * torch.pow(torch.tensor([10.0]), epoch / epochs * torch.log10(t_max / t_min))
    k = torch.max(1 / t, torch.tensor(1.0))
    return t, k


def main(epochs=2):
    model = TinyResNet()
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    model = model.to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        t, k = cpt_tk(epoch, epochs)
        for module in model.modules():
            if isinstance(module, IRConv2d):
                module.k = k.to(DEVICE)
                module.t = t.to(DEVICE)
        x = torch.randn(8, 3, 8, 8, device=DEVICE)
        y = torch.randint(0, 10, (8,), device=DEVICE)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(round(loss.item(), 3))


if __name__ == "__main__":
    main()
