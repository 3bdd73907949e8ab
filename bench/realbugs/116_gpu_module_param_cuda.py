# source: https://github.com/pytorch/pytorch/issues/20089
# error: (silent) list(gpu.parameters()) is empty; w gets a CopyBackward grad_fn and is never optimised
# bug: the weight is wrapped in nn.Parameter and then moved with .cuda() inside __init__; the result is a
#      non-leaf copy, so the module registers nothing and the optimizer never updates w.
import torch
import torch.nn as nn


class Gpu(nn.Module):
    def __init__(self):
        super(Gpu, self).__init__()
        self.w = nn.Parameter(torch.ones(10)).cuda()  # expect: DL102

    def forward(self, x):
        return x * self.w


gpu = Gpu()
optimizer = torch.optim.Adam(gpu.parameters(), lr=1e-3)
x = torch.randn(3, 10, device='cuda')
out = gpu(x).sum()
out.backward()
optimizer.step()
