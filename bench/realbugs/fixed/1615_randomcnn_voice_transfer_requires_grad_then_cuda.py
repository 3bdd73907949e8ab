# source: https://github.com/mazzzystar/randomCNN-voice-transfer/issues/16
# fixed twin: the tensor is created without requires_grad, moved, and only then marked as requiring grad, so Adam gets a leaf, as the fix (commit afe268ab) does.
import math
import time

import torch
import torch.nn as nn
from torch.autograd import Variable

cuda = True if torch.cuda.is_available() else False


class RandomCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=(3, 1), stride=1, padding=0)
        self.lrelu = nn.LeakyReLU(0.2)
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x_delta):
        return self.lrelu(self.conv1(x_delta))


def gram(x):
    b, c, h, w = x.shape
    f = x.view(c, h * w)
    return f @ f.t() / (h * w)


def compute_content_loss(a_C, a_G):
    return torch.mean((a_C - a_G) ** 2)


def compute_layer_style_loss(a_S, a_G):
    return torch.mean((gram(a_S) - gram(a_G)) ** 2)


def wav2spectrum(seed, bins=16, frames=24):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(bins, frames, generator=g).log1p()


a_content_torch = wav2spectrum(0)[None, None, :, :]
a_style_torch = wav2spectrum(1)[None, None, :, :]
if cuda:
    a_content_torch = a_content_torch.cuda()
    a_style_torch = a_style_torch.cuda()

model = RandomCNN()
model.eval()
a_C_var = Variable(a_content_torch, requires_grad=False).float()
a_S_var = Variable(a_style_torch, requires_grad=False).float()
if cuda:
    model = model.cuda()
a_C = model(a_C_var)
a_S = model(a_S_var)

learning_rate = 0.002
a_G_var = Variable(torch.randn(a_content_torch.shape) * 1e-3)
if cuda:
    a_G_var = a_G_var.cuda()
a_G_var.requires_grad = True
optimizer = torch.optim.Adam([a_G_var], lr=learning_rate)

start = time.time()
for epoch in range(1, 21):
    optimizer.zero_grad()
    a_G = model(a_G_var)
    loss = 1e2 * compute_content_loss(a_C, a_G) + compute_layer_style_loss(a_S, a_G)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        print(epoch, "%.1fs" % (time.time() - start), loss.item())

gen_spectrum = a_G_var.cpu().data.squeeze()
print(gen_spectrum.shape, math.isfinite(gen_spectrum.sum().item()))
