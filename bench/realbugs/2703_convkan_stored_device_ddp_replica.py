# source: https://github.com/AntonioTepsich/Convolutional-KANs/pull/13
# error: RuntimeError: Expected all tensors to be on the same device (the output map is allocated on the device given at
#        construction, "cpu" by default or cuda:0, while a DDP/DataParallel replica and its input are on another device)
# bug: the KAN convolution layers keep the `device` argument of __init__ (default "cpu") and hand it to the functional
#      convolution, which allocates its output map with torch.zeros(...).to(device) and writes the kernel's results
#      into it. A model built without that argument, or replicated to other GPUs by DDP, computes on the input's
#      device but allocates the output elsewhere. The merged PR (commit 594503b) stops storing the argument and sets
#      self.device = x.device at the top of both forwards; it inserts lines, so the two calls they precede are marked
#      (DL206: forward uses a device stored in __init__ instead of the input's).
import math

import torch
import torch.nn as nn


def calc_out_dims(matrix, kernel_side, stride, dilation, padding):
    batch_size, n_channels, n, m = matrix.shape
    h_out = math.floor((n + 2 * padding[0] - kernel_side - (kernel_side - 1) * (dilation[0] - 1)) / stride[0]) + 1
    w_out = math.floor((m + 2 * padding[1] - kernel_side - (kernel_side - 1) * (dilation[1] - 1)) / stride[1]) + 1
    return h_out, w_out, batch_size, n_channels


def kan_conv2d(matrix, kernel, kernel_side, stride=(1, 1), dilation=(1, 1), padding=(0, 0), device="cuda"):
    h_out, w_out, batch_size, n_channels = calc_out_dims(matrix, kernel_side, stride, dilation, padding)
    matrix_out = torch.zeros((batch_size, n_channels, h_out, w_out)).to(device)
    unfold = nn.Unfold((kernel_side, kernel_side), dilation=dilation, padding=padding, stride=stride)
    for channel in range(n_channels):
        groups = unfold(matrix[:, channel, :, :].unsqueeze(1)).transpose(1, 2)
        for k in range(batch_size):
            matrix_out[k, channel, :, :] = kernel(groups[k, :, :]).reshape((h_out, w_out))
    return matrix_out


def multiple_convs_kan_conv2d(matrix, kernels, kernel_side, stride=(1, 1), dilation=(1, 1), padding=(0, 0), device="cuda"):
    h_out, w_out, batch_size, n_channels = calc_out_dims(matrix, kernel_side, stride, dilation, padding)
    n_convs = len(kernels)
    matrix_out = torch.zeros((batch_size, n_channels * n_convs, h_out, w_out)).to(device)
    unfold = nn.Unfold((kernel_side, kernel_side), dilation=dilation, padding=padding, stride=stride)
    groups = unfold(matrix).view(batch_size, n_channels, kernel_side * kernel_side, h_out * w_out).transpose(2, 3)
    for channel in range(n_channels):
        for kern in range(n_convs):
            out = kernels[kern].conv(groups[:, channel, :, :].flatten(0, 1))
            matrix_out[:, kern + channel * n_convs, :, :] = out.reshape((batch_size, h_out, w_out))
    return matrix_out


class KANLinear(nn.Module):
    """A small stand-in for the spline layer: a SiLU base branch plus a learned per-feature curve."""

    def __init__(self, in_features, out_features, grid_size=5):
        super().__init__()
        self.base = nn.Linear(in_features, out_features)
        self.spline = nn.Parameter(torch.randn(out_features, in_features, grid_size) * 0.1)
        self.register_buffer("grid", torch.linspace(-1, 1, grid_size))

    def forward(self, x):
        basis = torch.exp(-((x.unsqueeze(-1) - self.grid) ** 2))
        return self.base(nn.functional.silu(x)) + torch.einsum("big,oig->bo", basis, self.spline)


class KAN_Convolution(nn.Module):
    def __init__(self, kernel_size=(2, 2), stride=(1, 1), padding=(0, 0), dilation=(1, 1), device="cpu"):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.device = device
        self.conv = KANLinear(math.prod(kernel_size), 1)

    def forward(self, x):
        return kan_conv2d(x, self.conv, self.kernel_size[0], self.stride, self.dilation, self.padding, self.device)  # expect: DL206


class KAN_Convolutional_Layer(nn.Module):
    def __init__(self, n_convs=1, kernel_size=(2, 2), stride=(1, 1), padding=(0, 0), dilation=(1, 1), device="cpu"):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.device = device
        self.n_convs = n_convs
        self.convs = nn.ModuleList(
            KAN_Convolution(kernel_size, stride, padding, dilation, device=device) for _ in range(n_convs)
        )

    def forward(self, x):
        if self.n_convs > 1:
            return multiple_convs_kan_conv2d(x, self.convs, self.kernel_size[0], self.stride, self.dilation, self.padding, self.device)  # expect: DL206
        return self.convs[0](x)


class KANC_MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = KAN_Convolutional_Layer(n_convs=3, kernel_size=(3, 3))
        self.conv2 = KAN_Convolutional_Layer(n_convs=1, kernel_size=(3, 3))
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(3 * 2 * 2, 10)

    def forward(self, x):
        x = self.pool(self.conv1(x))
        x = self.pool(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = KANC_MLP().to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    images = torch.randn(4, 1, 14, 14).to(device)
    print(model(images).shape)
