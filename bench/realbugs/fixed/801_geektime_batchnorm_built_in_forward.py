# source: https://github.com/syuu1987/geekTime-semantic-segmentation/issues/1
# fixed twin: the BatchNorm layers are built in __init__, as the reporter's fix in the thread does.
import torch
import torch.nn as nn


class DoubleConv(nn.Module):
    def __init__(self, in_channels, features):
        super().__init__()
        self.features = features
        self.conv1 = nn.Conv2d(in_channels, features, kernel_size=3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(num_features=features)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(num_features=features)

    def forward(self, input):
        x = self.conv1(input)
        x = self.norm1(x)
        x = nn.ReLU(inplace=True)(x)
        x = self.conv2(x)
        x = self.norm2(x)
        x = nn.ReLU(inplace=True)(x)
        return x


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    block = DoubleConv(3, 16).to(device)
    images = torch.randn(2, 3, 32, 32).to(device)
    print(block(images).shape)
