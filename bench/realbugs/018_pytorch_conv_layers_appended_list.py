# source: https://github.com/pytorch/pytorch/issues/8017
# error: parameters of layers created in a loop are not moved to the GPU by Module.to()/cuda()
# bug: the convolutions are appended to a plain list in __init__, so they are not registered
#      as submodules: model.to("cuda") leaves them on the CPU and model.parameters() is empty.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, layer_size):
        super(Model, self).__init__()
        self.conv = []  # expect: DL105
        for idx in range(layer_size):
            self.conv.append(nn.Conv2d(in_channels=in_channels, out_channels=out_channels, kernel_size=(3, 3)))
            in_channels = out_channels
            out_channels *= 2

    def forward(self, x):
        for conv in self.conv:
            x = conv(x)
        return x


model = Model(in_channels=1, out_channels=16, layer_size=3).to(torch.device("cuda"))
out = model(torch.randn(4, 1, 28, 28, device="cuda"))
