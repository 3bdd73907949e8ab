# source: https://github.com/anibali/pytorch-stacked-hourglass/pull/4
# fixed twin: commit d43449d always maps the released weights to the CPU when loading them:
#             load_state_dict_from_url(..., map_location=torch.device('cpu')).
import os
import tempfile

import torch
import torch.nn as nn
from torch.hub import load_state_dict_from_url

__all__ = ['HourglassNet', 'hg']

model_urls = {
    'hg1': 'https://github.com/anibali/pytorch-stacked-hourglass/releases/download/v0.0.0/bearpaw_hg1-ce125879.pth',
    'hg2': 'https://github.com/anibali/pytorch-stacked-hourglass/releases/download/v0.0.0/bearpaw_hg2-15e342d9.pth',
}


class HourglassNet(nn.Module):
    '''Hourglass model from Newell et al ECCV 2016 (one small stage per stack here)'''
    def __init__(self, num_stacks=2, num_blocks=1, num_classes=16):
        super(HourglassNet, self).__init__()
        self.num_stacks = num_stacks
        self.conv1 = nn.Conv2d(3, 16, kernel_size=7, stride=2, padding=3, bias=True)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.hg = nn.ModuleList([nn.Conv2d(16, 16, 3, padding=1) for _ in range(num_stacks)])
        self.score = nn.ModuleList([nn.Conv2d(16, num_classes, 1) for _ in range(num_stacks)])
        self.score_ = nn.ModuleList([nn.Conv2d(num_classes, 16, 1) for _ in range(num_stacks - 1)])

    def forward(self, x):
        out = []
        x = self.relu(self.bn1(self.conv1(x)))
        for i in range(self.num_stacks):
            y = self.relu(self.hg[i](x))
            score = self.score[i](y)
            out.append(score)
            if i < self.num_stacks - 1:
                x = x + y + self.score_[i](score)
        return out


def hg(**kwargs):
    return HourglassNet(num_stacks=kwargs['num_stacks'], num_blocks=kwargs['num_blocks'], num_classes=kwargs['num_classes'])


def _hg(arch, pretrained, progress, **kwargs):
    model = hg(**kwargs)
    if pretrained:
        state_dict = load_state_dict_from_url(model_urls[arch], progress=progress,
                                              map_location=torch.device('cpu'))
        model.load_state_dict(state_dict)
    return model


def hg1(pretrained=False, progress=True, num_blocks=1, num_classes=16):
    return _hg('hg1', pretrained, progress, num_stacks=1, num_blocks=num_blocks, num_classes=num_classes)


def hg2(pretrained=False, progress=True, num_blocks=1, num_classes=16):
    return _hg('hg2', pretrained, progress, num_stacks=2, num_blocks=num_blocks, num_classes=num_classes)


def publish_release(arch):
    torch.hub.set_dir(tempfile.mkdtemp())
    release = hg(num_stacks=2, num_blocks=1, num_classes=16)
    if torch.cuda.is_available():
        release = release.cuda()
    ckpt_dir = os.path.join(torch.hub.get_dir(), 'checkpoints')
    os.makedirs(ckpt_dir, exist_ok=True)
    torch.save(release.state_dict(), os.path.join(ckpt_dir, os.path.basename(model_urls[arch])))


if __name__ == "__main__":
    publish_release('hg2')
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = hg2(pretrained=True).to(device)
    model.eval()
    with torch.no_grad():
        heatmaps = model(torch.rand(1, 3, 64, 64, device=device))
    print(len(heatmaps), tuple(heatmaps[-1].shape))
