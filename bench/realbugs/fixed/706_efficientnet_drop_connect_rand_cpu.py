# source: https://github.com/lukemelas/EfficientNet-PyTorch/issues/43
# error: RuntimeError: expected backend CUDA and dtype Float but got backend CPU and dtype Float
# bug: drop connect (stochastic depth) in the MBConv blocks draws its per-sample keep mask with
#      torch.rand, passing the input's dtype but not its device, so training on the GPU adds a CPU
#      tensor to the scalar keep probability and multiplies the CUDA activations by it. The fix
#      (commit 939d4ab, released on PyPI after the issue) passes device=inputs.device (DL202).
import torch
import torch.nn as nn


def drop_connect(inputs, p, training):
    if not training:
        return inputs
    batch_size = inputs.shape[0]
    keep_prob = 1 - p
    random_tensor = keep_prob
    random_tensor += torch.rand([batch_size, 1, 1, 1], dtype=inputs.dtype, device=inputs.device)
    binary_tensor = torch.floor(random_tensor)
    return inputs / keep_prob * binary_tensor


class MBConvBlock(nn.Module):
    def __init__(self, channels, expand_ratio=4):
        super().__init__()
        hidden = channels * expand_ratio
        self.expand = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.SiLU())
        self.depthwise = nn.Sequential(
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.SiLU()
        )
        self.project = nn.Sequential(nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels))

    def forward(self, inputs, drop_connect_rate=None):
        x = self.project(self.depthwise(self.expand(inputs)))
        if drop_connect_rate:
            x = drop_connect(x, p=drop_connect_rate, training=self.training)
        return x + inputs


class TinyEfficientNet(nn.Module):
    def __init__(self, channels=8, n_blocks=3, drop_connect_rate=0.2, num_classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.blocks = nn.ModuleList(MBConvBlock(channels) for _ in range(n_blocks))
        self.drop_connect_rate = drop_connect_rate
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.stem(x)
        for idx, block in enumerate(self.blocks):
            x = block(x, drop_connect_rate=self.drop_connect_rate * idx / len(self.blocks))
        return self.fc(x.mean(dim=(2, 3)))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyEfficientNet().to(device)
    model.train()
    loss = model(torch.randn(4, 3, 16, 16, device=device)).sum()
    loss.backward()
    print(loss.item())
