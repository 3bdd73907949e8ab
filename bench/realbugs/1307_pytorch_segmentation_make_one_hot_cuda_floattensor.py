# source: https://github.com/yassouali/pytorch-segmentation/issues/80
# error: RuntimeError: arguments are located on different GPUs (scatter_ in make_one_hot, called from DiceLoss)
# bug: the Dice loss one-hot encodes the label map with a helper that allocates its buffer as a
#      torch.cuda.FloatTensor, i.e. on the current GPU, whatever device the labels and the logits
#      are on; training on a GPU other than the first scatters cuda:1 labels into a cuda:0 buffer,
#      and on a CPU-only machine the typed CUDA constructor itself fails (so this file does, by
#      design, where no GPU is present). The fix (commit 03e9041, after the reporter's patch) makes a
#      plain FloatTensor and moves it .to(labels.device); that line is marked (DL302).
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_one_hot(labels, classes):
    one_hot = torch.cuda.FloatTensor(labels.size()[0], classes, labels.size()[2], labels.size()[3]).zero_()  # expect: DL302
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
