# source: https://github.com/swz30/MPRNet/issues/128
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the multi-stage restoration network returns one output per stage; the training loop sums
#      the per-stage losses (CUDA scalar tensors) with np.sum over a Python list, which makes numpy
#      convert each CUDA tensor. The fix sums them with torch.stack(...) and torch.sum on the device.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class ThreeStageNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([nn.Conv2d(3, 3, 3, padding=1) for _ in range(3)])

    def forward(self, x):
        outs = []
        for stage in self.stages:
            x = stage(x)
            outs.insert(0, x)
        return outs


model = ThreeStageNet()
model.cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
char_loss = nn.L1Loss()
edge_loss = nn.MSELoss()
data = TensorDataset(torch.rand(32, 3, 64, 64), torch.rand(32, 3, 64, 64))
loader = DataLoader(data, batch_size=8, shuffle=True)

for epoch in range(2):
    model.train()
    for batch in loader:
        target = batch[0].cuda()
        input_ = batch[1].cuda()
        restored = model(input_)
        loss_char = torch.sum(torch.stack([char_loss(restored[j], target) for j in range(len(restored))]))
        loss_edge = torch.sum(torch.stack([edge_loss(restored[j], target) for j in range(len(restored))]))
        loss = loss_char + 0.05 * loss_edge
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
