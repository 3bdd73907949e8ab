# source: https://github.com/styalai/xLSTM-pytorch/issues/2
# error: RuntimeError: Expected all tensors to be on the same device (after model.to(device), e.g. under Lightning)
# bug: the mLSTM block keeps its recurrent states as plain tensor attributes created on the device of
#      the example input; model.to(device) does not move them, so forward mixes CPU states with GPU gates.
import torch
import torch.nn as nn
import torch.nn.functional as F


class mLSTMblock(nn.Module):
    def __init__(self, x_example, factor, dropout=0.2):
        super().__init__()
        self.input_size = x_example.shape[2]
        self.hidden_size = int(self.input_size * factor)

        self.ln = nn.LayerNorm(self.input_size)
        self.left = nn.Linear(self.input_size, self.hidden_size)
        self.right = nn.Linear(self.input_size, self.hidden_size)
        self.lskip = nn.Linear(self.hidden_size, self.hidden_size)
        self.wq = nn.Linear(self.hidden_size, self.hidden_size)
        self.wk = nn.Linear(self.hidden_size, self.hidden_size)
        self.wv = nn.Linear(self.hidden_size, self.hidden_size)
        self.i_gate = nn.Linear(self.hidden_size, self.hidden_size)
        self.f_gate = nn.Linear(self.hidden_size, self.hidden_size)
        self.o_gate = nn.Linear(self.hidden_size, self.hidden_size)
        self.ln_c = nn.LayerNorm(self.hidden_size)
        self.ln_n = nn.LayerNorm(self.hidden_size)
        self.GN = nn.LayerNorm(self.hidden_size)
        self.drop = nn.Dropout(dropout)
        self.proj = nn.Linear(self.hidden_size, self.input_size)

        self.init_states(x_example)

    def init_states(self, x_example):
        self.ct_1 = torch.zeros([1, 1, self.hidden_size], device=x_example.device)  # expect: DL103
        self.nt_1 = torch.zeros([1, 1, self.hidden_size], device=x_example.device)  # expect: DL103

    def forward(self, x):
        x = self.ln(x)
        left = F.silu(self.left(x))
        right = F.silu(self.right(x))
        l_skip = self.lskip(left)

        q = self.wq(left)
        k = self.wk(left)
        v = self.wv(left)
        i = torch.exp(self.i_gate(left))
        f = torch.exp(self.f_gate(left))
        o = torch.sigmoid(self.o_gate(left))

        ct_1 = self.ct_1
        ct = f * ct_1 + i * v * k
        ct = torch.mean(self.ln_c(ct), [0, 1], keepdim=True)
        self.ct_1 = ct.detach()

        nt_1 = self.nt_1
        nt = f * nt_1 + i * k
        nt = torch.mean(self.ln_n(nt), [0, 1], keepdim=True)
        self.nt_1 = nt.detach()

        ht = o * ((ct * q) / torch.max(nt * q))
        left = self.drop(self.GN(ht + l_skip))
        return self.proj(left * right)


if __name__ == "__main__":
    x_example = torch.zeros(4, 8, 32)
    model = mLSTMblock(x_example, factor=2).to("cuda")
    x = torch.randn(4, 8, 32, device="cuda")
    out = model(x)
