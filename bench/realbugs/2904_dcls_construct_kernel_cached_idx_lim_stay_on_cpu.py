# source: https://github.com/K-H-Ismail/Dilated-Convolution-with-Learnable-Spacings-PyTorch/pull/8
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (DCLS/construct/modules.py, forward_vgauss: P = P + self.lim // 2)
# bug: ConstructKernel2d builds its index grid IDX and the kernel limits lim lazily, in __init_tmp_variables__, on
#      the device of the weight of the first forward, and caches them as plain attributes (set to None in
#      __init__). A model run once on the CPU (the reporter's sanity check) and then moved to the GPU keeps the
#      cached CPU tensors: model.to(device) does not move plain attributes and the None check never rebuilds them,
#      so forward_vgauss adds the CPU lim to the GPU positions P. The PR was merged after the maintainer asked for
#      register_buffer, as the newer ConstructKernel2_1d does; the merged diff is not in the stored text (the
#      fetched snapshot predates it), so there is no twin and the marker is on the line the traceback points to
#      (DL201: a cached CPU tensor meeting the GPU parameter).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Module, Parameter


class ConstructKernel2d(Module):
    def __init__(self, out_channels, in_channels, groups, kernel_count, dilated_kernel_size, version):
        super().__init__()
        self.version = version
        self.out_channels = out_channels
        self.in_channels = in_channels
        self.groups = groups
        self.dilated_kernel_size = dilated_kernel_size
        self.kernel_count = kernel_count
        self.IDX = None
        self.lim = None

    def __init_tmp_variables__(self, device):
        if self.IDX is None or self.lim is None:
            J = Parameter(torch.arange(0, self.dilated_kernel_size[0]), requires_grad=False).to(device)
            I = Parameter(torch.arange(0, self.dilated_kernel_size[1]), requires_grad=False).to(device)
            I = I.expand(self.dilated_kernel_size[0], -1)
            J = J.expand(self.dilated_kernel_size[1], -1).t()
            IDX = torch.cat((I.unsqueeze(0), J.unsqueeze(0)), 0)
            IDX = IDX.expand(self.out_channels, self.in_channels // self.groups, self.kernel_count, -1, -1, -1)
            self.IDX = IDX.permute(4, 5, 3, 0, 1, 2)
            lim = torch.tensor(self.dilated_kernel_size).to(device)
            self.lim = lim.expand(self.out_channels, self.in_channels // self.groups, self.kernel_count, -1).permute(3, 0, 1, 2)

    def forward_v1(self, W, P):
        P = P + self.lim // 2
        X = self.IDX - P
        X = ((1 - X.abs()).relu()).prod(2)
        X = X / (X.sum((0, 1)) + 1e-7)
        return (X * W).sum(-1).permute(2, 3, 0, 1)

    def forward_vgauss(self, W, P, SIG):
        P = P + self.lim // 2  # expect: DL201
        SIG = SIG.abs() + 0.27
        X = ((self.IDX - P) / SIG).norm(2, dim=2)
        X = (-0.5 * X ** 2).exp()
        X = X / (X.sum((0, 1)) + 1e-7)
        return (X * W).sum(-1).permute(2, 3, 0, 1)

    def forward(self, W, P, SIG):
        self.__init_tmp_variables__(W.device)
        if self.version == "v1":
            return self.forward_v1(W, P)
        elif self.version == "gauss":
            return self.forward_vgauss(W, P, SIG)
        raise ValueError(self.version)


class Dcls2d(Module):
    def __init__(self, in_channels, out_channels, kernel_count, dilated_kernel_size, padding=0, groups=1, version="gauss"):
        super().__init__()
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.padding = padding
        self.weight = Parameter(torch.randn(out_channels, in_channels // groups, kernel_count) * 0.1)
        self.bias = Parameter(torch.zeros(out_channels))
        lim = torch.tensor(dilated_kernel_size).view(2, 1, 1, 1).float()
        self.P = Parameter((torch.rand(2, out_channels, in_channels // groups, kernel_count) - 0.5) * lim / 2)
        self.SIG = Parameter(torch.full((2, out_channels, in_channels // groups, kernel_count), 0.23))
        self.DCK = ConstructKernel2d(out_channels, in_channels, groups, kernel_count, dilated_kernel_size, version)

    def _conv_forward(self, input, weight, bias, P, SIG):
        return F.conv2d(input, self.DCK(weight, P, SIG), bias, 1, self.padding, 1, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias, self.P, self.SIG)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dcls = Dcls2d(8, 8, kernel_count=4, dilated_kernel_size=(5, 5), padding=2, groups=8)
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = F.relu(self.dcls(F.relu(self.conv(x))))
        return self.head(x.mean(dim=(2, 3)))


def sanity_check(model):
    with torch.no_grad():
        model(torch.randn(2, 3, 16, 16))


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net()
    sanity_check(model)
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(3):
        x, y = torch.randn(4, 3, 16, 16, device=device), torch.randint(0, 10, (4,), device=device)
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
