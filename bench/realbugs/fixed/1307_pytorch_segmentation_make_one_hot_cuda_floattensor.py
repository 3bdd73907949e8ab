# source: https://github.com/yassouali/pytorch-segmentation/issues/80
# fixed twin: the one-hot buffer is a plain FloatTensor moved to labels.device, as commit 03e9041 does.
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_one_hot(labels, classes):
    one_hot = torch.FloatTensor(labels.size()[0], classes, labels.size()[2], labels.size()[3]).zero_().to(labels.device)
    target = one_hot.scatter_(1, labels.data, 1)
    return target


class DiceLoss(nn.Module):
    def __init__(self, smooth=1.0, ignore_index=255):
        super().__init__()
        self.ignore_index = ignore_index
        self.smooth = smooth

    def forward(self, output, target):
        if self.ignore_index not in range(target.min(), target.max()):
            if (target == self.ignore_index).sum() > 0:
                target[target == self.ignore_index] = target.min()
        target = make_one_hot(target.unsqueeze(dim=1), classes=output.size()[1])
        output = F.softmax(output, dim=1)
        output_flat = output.contiguous().view(-1)
        target_flat = target.contiguous().view(-1)
        intersection = (output_flat * target_flat).sum()
        return 1 - ((2.0 * intersection + self.smooth) / (output_flat.sum() + target_flat.sum() + self.smooth))


class CE_DiceLoss(nn.Module):
    def __init__(self, smooth=1, ignore_index=255):
        super().__init__()
        self.dice = DiceLoss(smooth=smooth)
        self.cross_entropy = nn.CrossEntropyLoss(ignore_index=ignore_index)

    def forward(self, output, target):
        return self.cross_entropy(output, target) + self.dice(output, target)


class TinySegNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_classes, 1))

    def forward(self, x):
        return self.body(x)


if __name__ == "__main__":
    if torch.cuda.device_count() > 1:
        device = torch.device("cuda:1")
    else:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinySegNet().to(device)
    loss_fn = CE_DiceLoss()
    images = torch.randn(2, 3, 16, 16).to(device)
    labels = torch.randint(0, 4, (2, 16, 16)).to(device)
    loss = loss_fn(model(images), labels)
    loss.backward()
    print(loss.item())
