# source: https://github.com/pytorch/pytorch/issues/39062
# error: (silent) list(model.parameters()) is empty: the threshold is never trained
# bug: nn.Parameter(...).to('cuda') returns a plain non-leaf Tensor, so the attribute is not registered
#      as a parameter of the layer; training silently skips it.
import torch
import torch.nn as nn


class CustomLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.threshold = nn.Parameter(torch.randn(1)).to('cuda')  # expect: DL102

    def forward(self, input):
        return torch.relu(input - self.threshold)


model = nn.Sequential(nn.Linear(8, 8), CustomLayer()).to('cuda')
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8, device='cuda')
loss = model(x).sum()
loss.backward()
optimizer.step()
print(list(model[1].parameters()))
