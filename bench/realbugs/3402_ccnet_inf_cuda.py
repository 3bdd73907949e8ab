# source: https://github.com/Serge-weihao/CCNet-Pure-Pytorch/issues/6
# error: RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #3
#        'other', at energy_H = (torch.bmm(proj_query_H, proj_key_H)+self.INF(m_batchsize, height, width)) ... in
#        CC_module.forward, running the module's own check (x = torch.randn(2,64,5,6); model(x)) on a GPU machine
# bug: networks/CC.py's INF builds the -inf diagonal with torch.tensor(float("inf")).cuda(), a hard-coded GPU, while
#      the file's __main__ check builds CC_module(64) and its input on the CPU; the bmm of the CPU projections is added
#      to the CUDA diagonal. The maintainer's answer: move x and the model to the GPU, or remove the .cuda() in INF; the
#      issue is open and CC.py is unchanged, so the line of the traceback (the energy_H sum) is marked (DL201); INF's
#      .cuda() is the DL302 candidate. Reductions: none of note (CC_decoder had left CC.py before the issue, in aff7807); CC_module is kept whole.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Softmax


def INF(B, H, W):
    return -torch.diag(torch.tensor(float("inf")).cuda().repeat(H), 0).unsqueeze(0).repeat(B * W, 1, 1)


class CC_module(nn.Module):
    def __init__(self, in_dim):
        super(CC_module, self).__init__()
        self.query_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.value_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim, kernel_size=1)
        self.softmax = Softmax(dim=3)
        self.INF = INF
        self.gamma = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        m_batchsize, _, height, width = x.size()
        proj_query = self.query_conv(x)
        proj_query_H = proj_query.permute(0, 3, 1, 2).contiguous().view(m_batchsize * width, -1, height).permute(0, 2, 1)
        proj_query_W = proj_query.permute(0, 2, 1, 3).contiguous().view(m_batchsize * height, -1, width).permute(0, 2, 1)
        proj_key = self.key_conv(x)
        proj_key_H = proj_key.permute(0, 3, 1, 2).contiguous().view(m_batchsize * width, -1, height)
        proj_key_W = proj_key.permute(0, 2, 1, 3).contiguous().view(m_batchsize * height, -1, width)
        proj_value = self.value_conv(x)
        proj_value_H = proj_value.permute(0, 3, 1, 2).contiguous().view(m_batchsize * width, -1, height)
        proj_value_W = proj_value.permute(0, 2, 1, 3).contiguous().view(m_batchsize * height, -1, width)
        energy_H = (torch.bmm(proj_query_H, proj_key_H) + self.INF(m_batchsize, height, width)).view(m_batchsize, width, height, height).permute(0, 2, 1, 3)  # expect: DL201
        energy_W = torch.bmm(proj_query_W, proj_key_W).view(m_batchsize, height, width, width)
        concate = self.softmax(torch.cat([energy_H, energy_W], 3))
        att_H = concate[:, :, :, 0:height].permute(0, 2, 1, 3).contiguous().view(m_batchsize * width, height, height)
        att_W = concate[:, :, :, height:height + width].contiguous().view(m_batchsize * height, width, width)
        out_H = torch.bmm(proj_value_H, att_H.permute(0, 2, 1)).view(m_batchsize, width, -1, height).permute(0, 2, 3, 1)
        out_W = torch.bmm(proj_value_W, att_W.permute(0, 2, 1)).view(m_batchsize, height, -1, width).permute(0, 2, 1, 3)
        return self.gamma * (out_H + out_W) + x


if __name__ == '__main__':
    model = CC_module(64)
    x = torch.randn(2, 64, 5, 6)
    out = model(x)
    print(out.shape)
