# source: https://github.com/pytorch/pytorch/issues/4412
# error: net.cuda() does not put the parameters of the layers held in self.convs on the GPU
# bug: two conv stacks are kept in a plain Python list attribute, so they are not registered
#      as submodules and net.cuda() leaves their weights on the CPU.
import torch
import torch.nn as nn


class Network(nn.Module):
    def __init__(self, in_channels=64):
        super(Network, self).__init__()
        self.in_channels = in_channels
        self.convs = [  # expect: DL105
            nn.Sequential(
                nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels, kernel_size=3, stride=1, padding=1),
                nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels, kernel_size=3, stride=1, padding=1),
            ),
            nn.Sequential(
                nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels, kernel_size=3, stride=1, padding=1),
                nn.Conv2d(in_channels=self.in_channels, out_channels=self.in_channels, kernel_size=3, stride=1, padding=1),
            ),
        ]

    def forward(self, x):
        output = self.convs[0](x)
        output = self.convs[1](x)
        return output


net = Network()
net.cuda()
out = net(torch.randn(1, 64, 32, 32).cuda())
