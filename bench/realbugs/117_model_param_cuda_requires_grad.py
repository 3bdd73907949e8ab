# source: https://github.com/pytorch/pytorch/issues/94828
# error: (silent) list(m.parameters()) only lists the Linear layer's parameters, not t
# bug: the learnable offset t is created as nn.Parameter(...).cuda(); the .cuda() copy is a plain tensor,
#      so t is not registered (not trained, not saved) even though the model is moved with Model().cuda().
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.t = torch.nn.Parameter(torch.rand(10), requires_grad=True).cuda()  # expect: DL102
        self.linear = torch.nn.Linear(10, 20)

    def forward(self, x):
        x = self.t + x
        x = self.linear(x)
        return x


m = Model().cuda()
print(list(m.parameters()))
