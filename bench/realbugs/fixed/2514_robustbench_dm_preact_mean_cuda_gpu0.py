# source: https://github.com/RobustBench/robustbench/issues/58
# fixed twin: mean and std are registered as buffers, moved with the model, and forward normalises with them directly (PR 61, commit 21148b5).
import torch
import torch.nn as nn
import torch.nn.functional as F

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2471, 0.2435, 0.2616)


class _PreActBlock(nn.Module):
  def __init__(self, in_planes, out_planes, stride):
    super().__init__()
    self.batchnorm_0 = nn.BatchNorm2d(in_planes)
    self.conv_2d_1 = nn.Conv2d(in_planes, out_planes, 3, stride, 1, bias=False)
    self.batchnorm_1 = nn.BatchNorm2d(out_planes)
    self.conv_2d_2 = nn.Conv2d(out_planes, out_planes, 3, 1, 1, bias=False)
    self.shortcut = (nn.Conv2d(in_planes, out_planes, 1, stride, bias=False)
                     if stride != 1 or in_planes != out_planes else None)

  def forward(self, x):
    out = F.relu(self.batchnorm_0(x))
    shortcut = self.shortcut(out) if self.shortcut is not None else x
    out = self.conv_2d_1(out)
    out = self.conv_2d_2(F.relu(self.batchnorm_1(out)))
    return out + shortcut


class DMPreActResNet(nn.Module):
  def __init__(self, num_classes=10, mean=CIFAR10_MEAN, std=CIFAR10_STD, padding=0, num_input_channels=3):
    super().__init__()
    self.register_buffer("mean", torch.tensor(mean).view(num_input_channels, 1, 1))
    self.register_buffer("std", torch.tensor(std).view(num_input_channels, 1, 1))
    self.mean_cuda = None
    self.std_cuda = None
    self.padding = padding
    self.conv_2d = nn.Conv2d(num_input_channels, 16, 3, 1, 1, bias=False)
    self.layer_0 = _PreActBlock(16, 16, 1)
    self.layer_1 = _PreActBlock(16, 32, 2)
    self.batchnorm = nn.BatchNorm2d(32)
    self.linear = nn.Linear(32, num_classes)

  def forward(self, x):
    if self.padding > 0:
      x = F.pad(x, (self.padding,) * 4)
    out = (x - self.mean) / self.std
    out = self.conv_2d(out)
    out = self.layer_1(self.layer_0(out))
    out = F.relu(self.batchnorm(out))
    out = F.adaptive_avg_pool2d(out, 1).flatten(1)
    return self.linear(out)


if __name__ == "__main__":
  device = torch.device("cuda", torch.cuda.device_count() - 1) if torch.cuda.is_available() else torch.device("cpu")
  model = DMPreActResNet().to(device).eval()
  x = torch.rand(4, 3, 32, 32, device=device)
  with torch.no_grad():
    print(model(x).argmax(dim=1).tolist())
