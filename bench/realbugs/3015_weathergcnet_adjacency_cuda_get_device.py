# source: https://github.com/tstanczyk95/WeatherGCNet/issues/1
# error: RuntimeError: Device index must not be negative (running the training script; a screenshot in the report,
#        which links the Stack Overflow advice against get_device())
# bug: train_model.py runs on dev = cuda:0 when available, else the CPU, and moves the model and each batch there.
#      unit_gcn keeps the fixed adjacency self.A = Variable(torch.eye(7)) as a plain attribute and, in forward, moves it
#      with self.A = self.A.cuda(x.get_device()): on a GPU that follows the input, but for a CPU input get_device()
#      returns -1 and .cuda(-1) fails, so the model cannot run on the CPU the script itself falls back to. The issue is
#      open with no answer and the code was never changed (no fix, so no twin); the cause is read from model_nl.py and
#      train_model.py in the index. The marker is on that move (DL302: a CUDA move hard-coded in a module's forward,
#      which otherwise runs where its input is). The .pkl dataset and its loaders are replaced by random tensors; the
#      test phase is left out.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset


def conv_init(conv):
    nn.init.kaiming_normal_(conv.weight, mode="fan_out")
    nn.init.constant_(conv.bias, 0)


def bn_init(bn, scale):
    nn.init.constant_(bn.weight, scale)
    nn.init.constant_(bn.bias, 0)


class unit_tcn(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1):
        super(unit_tcn, self).__init__()
        pad = int((kernel_size - 1) / 2)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=(kernel_size, 1), padding=(pad, 0), stride=(stride, 1))
        self.bn = nn.BatchNorm2d(out_channels)
        conv_init(self.conv)
        bn_init(self.bn, 1)

    def forward(self, x):
        return self.bn(self.conv(x))


class unit_gcn(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(unit_gcn, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1)
        self.B = nn.Parameter(torch.zeros(7, 7) + 1e-6)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.A = Variable(torch.eye(7), requires_grad=False)
        if in_channels != out_channels:
            self.down = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1), nn.BatchNorm2d(out_channels))
        else:
            self.down = lambda x: x
        bn_init(self.bn, 1e-6)

    def forward(self, x):
        N, C, T, V = x.size()
        f_in = x.contiguous().view(N, C * T, V)
        self.A = self.A.cuda(x.get_device())  # expect: DL302
        adj_mat = self.B[:, :] + self.A[:, :]
        adj_mat_min = torch.min(adj_mat)
        adj_mat_max = torch.max(adj_mat)
        adj_mat = (adj_mat - adj_mat_min) / (adj_mat_max - adj_mat_min)
        D = Variable(torch.diag(torch.sum(adj_mat, axis=1)), requires_grad=False)
        D_12 = torch.sqrt(torch.inverse(D))
        adj_mat_norm_d12 = torch.matmul(torch.matmul(D_12, adj_mat), D_12)
        y = self.conv(torch.matmul(f_in, adj_mat_norm_d12).view(N, C, T, V))
        y = self.bn(y)
        y += self.down(x)
        return self.relu(y)


class TCN_GCN_unit(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super(TCN_GCN_unit, self).__init__()
        self.gcn1 = unit_gcn(in_channels, out_channels)
        self.tcn1 = unit_tcn(out_channels, out_channels, stride=stride)
        self.relu = nn.ReLU()
        self.residual = unit_tcn(in_channels, out_channels, kernel_size=1, stride=stride)

    def forward(self, x):
        x = self.gcn1(x) + self.residual(x)
        return self.relu(self.tcn1(x))


class Model(nn.Module):
    def __init__(self, input_timesteps=30):
        super(Model, self).__init__()
        self.data_bn = nn.BatchNorm1d(6 * 7)
        self.l1 = TCN_GCN_unit(6, 16)
        self.l2 = TCN_GCN_unit(16, 32)
        self.conv_reduce_dim = unit_tcn(32, 4, kernel_size=1, stride=1)
        self.fc = nn.Linear(4 * input_timesteps * 7, 7)
        nn.init.normal_(self.fc.weight, 0, math.sqrt(2. / 7))
        bn_init(self.data_bn, 1)

    def forward(self, x):
        N, C, T, V = x.size()
        x = x.permute(0, 3, 1, 2).contiguous().view(N, V * C, T)
        x = self.data_bn(x)
        x = x.view(N, V, C, T).permute(0, 2, 3, 1).contiguous().view(N, C, T, V)
        x = self.l2(self.l1(x))
        x = self.conv_reduce_dim(x)
        return self.fc(x.view(x.size(0), -1))


if __name__ == "__main__":
    torch.manual_seed(123)
    dev = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    print(dev)
    model = Model(input_timesteps=10)
    model = model.double().to(dev)
    train_dl = DataLoader(TensorDataset(torch.rand(32, 6, 10, 7, dtype=torch.double), torch.rand(32, 7, dtype=torch.double)),
                          batch_size=8)
    opt = optim.Adam(model.parameters())
    for epoch in range(2):
        model.train()
        for xb, yb in train_dl:
            pred = model(xb.to(dev))
            loss = F.l1_loss(pred, yb.to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(epoch, loss.item())
