# source: https://github.com/mzemlyanikin/binary-nets/issues/1
# error: (reported) after a first forward on the CPU, model.cuda() leaves the saved real-valued weights (weight.original) on the CPU; the next forward rebinarises from them, the conv weight becomes a CPU tensor again and the GPU input fails with a device mismatch
# bug: BinaryConv2d keeps the full-precision copy of its weights as a plain tensor attribute of
#      the Parameter (self.weight.original), made lazily on the first forward; the training loop
#      copies it back and forth around optimizer.step(). Module moves replace a parameter's .data
#      but know nothing of attributes hung on it, so a model run once on the CPU and then moved
#      keeps the copy on the CPU, and forward writes the binarised CPU copy into weight.data.
#      The issue is open with no fix, so there is no twin. The line that stores the copy is
#      marked (DL103, the closest rule: a plain tensor attribute that model.to does not move).
import torch
import torch.nn as nn
import torch.nn.functional as F


class WeightBinarizer(nn.Module):
    def forward(self, w):
        return w.sign() * w.abs().mean()


class ActivationBinarizer(nn.Module):
    def forward(self, x):
        return x + (x.sign() - x).detach()


class BinaryConv2d(nn.Conv2d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True,
                 activation_binarizer=None, weight_binarizer=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias=bias)
        self.binarize_act = activation_binarizer or ActivationBinarizer()
        self.binarize_w = weight_binarizer or WeightBinarizer()

    def forward(self, input):
        if input.size(1) != 3:
            input = self.binarize_act(input)
        if not hasattr(self.weight, "original"):
            self.weight.original = self.weight.data.clone()  # expect: DL103
        self.weight.data = self.binarize_w(self.weight.original)
        out = F.conv2d(input, self.weight, None, self.stride, self.padding, self.dilation, self.groups)
        if self.bias is not None:
            out += self.bias.view(1, -1, 1, 1).expand_as(out)
        return out


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = BinaryConv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = BinaryConv2d(8, 8, 3, padding=1, bias=False)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        x = self.bn(self.conv1(x))
        x = self.conv2(x)
        return self.fc(x.mean((2, 3)))


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    for p in list(model.parameters()):
        if hasattr(p, "original"):
            p.data.copy_(p.original)
    optimizer.step()
    for p in list(model.parameters()):
        if hasattr(p, "original"):
            p.original.copy_(p.data.clamp_(-1, 1))
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = BinaryNet()
    model(torch.randn(1, 3, 8, 8))  # a first run on the CPU (a shape check, an export)
    model = model.cuda() if device.type == "cuda" else model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 8, 8, device=device)
    y = torch.randint(0, 4, (4,), device=device)
    print(train_step(model, optimizer, x, y), model.conv1.weight.original.device)
