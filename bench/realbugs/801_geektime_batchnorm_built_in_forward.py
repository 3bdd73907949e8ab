# source: https://github.com/syuu1987/geekTime-semantic-segmentation/issues/1
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the U-Net style double-conv block builds nn.BatchNorm2d (and ReLU) inside forward. The
#      fresh BatchNorm is created on the CPU at every call, so after model.to("cuda") its weight
#      meets the CUDA activations (and it is never trained). The reporter's fix in the thread
#      builds the BatchNorm layers in __init__; the lines that fix changed are marked.
import torch
import torch.nn as nn


class DoubleConv(nn.Module):
    def __init__(self, in_channels, features):
        super().__init__()
        self.features = features
        self.conv1 = nn.Conv2d(in_channels, features, kernel_size=3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, padding=1, bias=False)

    def forward(self, input):
        x = self.conv1(input)
        x = nn.BatchNorm2d(num_features=self.features)(x)  # expect: DL106
        x = nn.ReLU(inplace=True)(x)
        x = self.conv2(x)
        x = nn.BatchNorm2d(num_features=self.features)(x)  # expect: DL106
        x = nn.ReLU(inplace=True)(x)
        return x


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    block = DoubleConv(3, 16).to(device)
    images = torch.randn(2, 3, 32, 32).to(device)
    print(block(images).shape)
