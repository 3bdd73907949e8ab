# source: https://github.com/hkzhang-git/HiNAS/pull/8
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the SSIM losses keep their Gaussian window as a plain tensor attribute, moved with .cuda()
#      in __init__ only when is_cuda is set. The super-resolution network builds its SSIM/gradient
#      losses with is_cuda=False and keeps them in a plain Python list, so model.cuda() never reaches
#      them: the window stays on the CPU while the network's output and the target are on the GPU.
#      The PR (open; its description gives cause and fix, issue 3) removes is_cuda=False at the loss
#      construction; that line is marked. No rule covers the flag itself; DL105 (losses kept in a
#      plain list, which the network's move never reaches) is the closest. No fixed twin: the fixed
#      program calls .cuda() in the losses' __init__ and cannot run without a GPU.
from math import exp

import torch
import torch.nn as nn
import torch.nn.functional as F


def gaussian(window_size, sigma):
    gauss = torch.Tensor([exp(-(x - window_size // 2) ** 2 / float(2 * sigma ** 2)) for x in range(window_size)])
    return gauss / gauss.sum()


def create_window(window_size, channel):
    _1D_window = gaussian(window_size, 1.5).unsqueeze(1)
    _2D_window = _1D_window.mm(_1D_window.t()).float().unsqueeze(0).unsqueeze(0)
    return _2D_window.expand(channel, 1, window_size, window_size).contiguous()


class negative_SSIM_loss(nn.Module):
    def __init__(self, window_size=11, channel=3, is_cuda=True):
        super().__init__()
        self.window_size = window_size
        self.channel = channel
        self.window = create_window(window_size, channel)
        if is_cuda:
            self.window = self.window.cuda()

    def forward(self, img1, img2):
        mu1 = F.conv2d(img1, self.window, padding=self.window_size // 2, groups=self.channel)
        mu2 = F.conv2d(img2, self.window, padding=self.window_size // 2, groups=self.channel)
        sigma1_sq = F.conv2d(img1 * img1, self.window, padding=self.window_size // 2, groups=self.channel) - mu1 ** 2
        sigma2_sq = F.conv2d(img2 * img2, self.window, padding=self.window_size // 2, groups=self.channel) - mu2 ** 2
        sigma12 = F.conv2d(img1 * img2, self.window, padding=self.window_size // 2, groups=self.channel) - mu1 * mu2
        C1, C2 = 0.01 ** 2, 0.03 ** 2
        ssim_map = ((2 * mu1 * mu2 + C1) * (2 * sigma12 + C2)) / ((mu1 ** 2 + mu2 ** 2 + C1) * (sigma1_sq + sigma2_sq + C2))
        return 1.0 - ssim_map.mean()


class l1_loss(nn.Module):
    def forward(self, img1, img2):
        return (img1 - img2).abs().mean()


loss_dict = {"ssim": negative_SSIM_loss, "l1": l1_loss}


class SuperResolutionNet(nn.Module):
    def __init__(self, losses=("l1", "ssim"), loss_weights=(1.0, 0.5)):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
        self.loss_dict = []
        self.loss_weight = []
        for loss_item, loss_weight in zip(losses, loss_weights):
            if "ssim" in loss_item or "grad" in loss_item:
                self.loss_dict.append(loss_dict[loss_item](channel=3, is_cuda=False))  # expect: DL105
            else:
                self.loss_dict.append(loss_dict[loss_item]())
            self.loss_weight.append(loss_weight)

    def forward(self, images, targets=None):
        output = images + self.body(images)
        if self.training and targets is not None:
            return sum(w * loss(output, targets) for loss, w in zip(self.loss_dict, self.loss_weight))
        return output


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SuperResolutionNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    images, targets = torch.rand(2, 3, 24, 24).to(device), torch.rand(2, 3, 24, 24).to(device)
    loss = model(images, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(loss.item())
