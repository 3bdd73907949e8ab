# source: https://github.com/pytorch/pytorch/issues/21905
# error: Module.to(device) does not move the layers kept in a Python list
# bug: a hand-written multi-layer GRU appends its input and hidden projections to plain lists;
#      model.to("cuda:0") skips them (one of them had been moved by hand, the other stays on
#      the CPU) and the recurrent step mixes devices.
import torch
import torch.nn as nn


class MultiLayerGRU(nn.Module):
    def __init__(self, input_size, hidden_size, layn, bias=True):
        super(MultiLayerGRU, self).__init__()
        self.hidden_size = hidden_size
        self.bias = bias
        self.x2h = []  # expect: DL105
        self.h2h = []  # expect: DL105
        for x in range(layn):
            temp1 = nn.Linear(input_size, 3 * hidden_size, bias=self.bias)
            temp2 = nn.Linear(hidden_size, 3 * hidden_size, bias=self.bias).to("cuda:0")
            self.x2h.append(temp1)
            self.h2h.append(temp2)
            input_size = hidden_size

    def forward(self, x, hidden):
        for x2h, h2h in zip(self.x2h, self.h2h):
            gate_x = x2h(x)
            gate_h = h2h(hidden)
            i_r, i_i, i_n = gate_x.chunk(3, 1)
            h_r, h_i, h_n = gate_h.chunk(3, 1)
            resetgate = torch.sigmoid(i_r + h_r)
            inputgate = torch.sigmoid(i_i + h_i)
            newgate = torch.tanh(i_n + resetgate * h_n)
            hidden = newgate + inputgate * (hidden - newgate)
            x = hidden
        return hidden


model = MultiLayerGRU(32, 64, 2).to("cuda:0")
h = model(torch.randn(8, 32, device="cuda:0"), torch.zeros(8, 64, device="cuda:0"))
