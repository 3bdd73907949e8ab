# source: https://github.com/sniklaus/pytorch-spynet/issues/17
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!
# bug: the optical-flow network warps its second frame with a module-level backwarp helper that
#      caches the sampling grid in a dict keyed by the flow's SHAPE only; the grid is built once
#      and placed on the program's GPU (.cuda() upstream; the module-level device here, so the
#      script runs on a CPU). Wrapped in DataParallel, the replica on cuda:1 finds the grid the
#      replica on cuda:0 cached and adds it to its own flow. The maintainer answered with a
#      rewritten backwarp whose code is cut off in the stored text, so there is no twin; the line
#      the traceback points to (grid + flow inside grid_sample) is marked (DL201, an op whose tensor
#      operands sit on different devices).
import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

backwarp_grid = {}


def backwarp(ten_input, ten_flow):
    if str(ten_flow.shape) not in backwarp_grid:
        hor = torch.linspace(-1.0, 1.0, ten_flow.shape[3]).view(1, 1, 1, -1).expand(ten_flow.shape[0], -1, ten_flow.shape[2], -1)
        ver = torch.linspace(-1.0, 1.0, ten_flow.shape[2]).view(1, 1, -1, 1).expand(ten_flow.shape[0], -1, -1, ten_flow.shape[3])
        backwarp_grid[str(ten_flow.shape)] = torch.cat([hor, ver], 1).to(DEVICE)
    ten_flow = torch.cat([ten_flow[:, 0:1] / ((ten_input.shape[3] - 1.0) / 2.0),
                          ten_flow[:, 1:2] / ((ten_input.shape[2] - 1.0) / 2.0)], 1)
    return F.grid_sample(ten_input, (backwarp_grid[str(ten_flow.shape)] + ten_flow).permute(0, 2, 3, 1),  # expect: DL201
                         mode="bilinear", padding_mode="border", align_corners=False)


class Basic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(8, 16, 7, padding=3), nn.ReLU(), nn.Conv2d(16, 2, 7, padding=3))

    def forward(self, x):
        return self.net(x)


class Network(nn.Module):
    def __init__(self, levels=3):
        super().__init__()
        self.basic = nn.ModuleList([Basic() for _ in range(levels)])

    def forward(self, one, two):
        ones, twos = [one], [two]
        for _ in range(len(self.basic) - 1):
            ones.insert(0, F.avg_pool2d(ones[0], 2))
            twos.insert(0, F.avg_pool2d(twos[0], 2))
        flow = ones[0].new_zeros(ones[0].shape[0], 2, ones[0].shape[2] // 2, ones[0].shape[3] // 2)
        for level, basic in enumerate(self.basic):
            up = F.interpolate(flow, scale_factor=2, mode="bilinear", align_corners=True) * 2.0
            warped = backwarp(twos[level], up)
            flow = basic(torch.cat([ones[level], warped, up], 1)) + up
        return flow


if __name__ == "__main__":
    net = nn.DataParallel(Network().to(DEVICE))
    one, two = torch.rand(4, 3, 32, 32, device=DEVICE), torch.rand(4, 3, 32, 32, device=DEVICE)
    print(net(one, two).shape)
