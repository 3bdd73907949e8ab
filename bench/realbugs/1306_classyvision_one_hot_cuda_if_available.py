# source: https://github.com/facebookresearch/ClassyVision/pull/69
# error: RuntimeError: Expected all tensors to be on the same device (scatter_ of CPU class indices into a CUDA one-hot buffer)
# bug: convert_to_one_hot, shared by the label-smoothing loss and the precision/recall meters, chose
#      the device of the one-hot tensor it returns by asking whether CUDA is available instead of
#      looking at the targets it is given; on a GPU machine CPU targets (a CPU run, the unit tests,
#      meters fed host tensors) are scattered into a CUDA buffer. The fix (landed as D17973726; the
#      repository's first public commit has the fixed function) makes the tensor on targets.device.
#      The bug's own line is rebuilt from the PR's description. Marked with DL302, the closest rule
#      and a stretch: DL302 leaves cuda-if-available choices alone, and no rule covers a helper
#      that places its result by availability rather than by its argument.
import torch
import torch.nn as nn
import torch.nn.functional as F


def convert_to_one_hot(targets, classes):
    assert torch.max(targets).item() < classes, "Class Index must be less than number of classes"
    one_hot_targets = torch.zeros((targets.shape[0], classes), dtype=torch.long, device=torch.device("cuda" if torch.cuda.is_available() else "cpu"))  # expect: DL302
    one_hot_targets.scatter_(1, targets.long(), 1)
    return one_hot_targets


class LabelSmoothingCrossEntropyLoss(nn.Module):
    def __init__(self, smoothing_param=0.1, ignore_index=-100):
        super().__init__()
        self.smoothing_param = smoothing_param
        self.ignore_index = ignore_index

    def forward(self, output, target):
        valid = target != self.ignore_index
        classes = output.shape[1]
        one_hot = convert_to_one_hot(target[valid].view(-1, 1), classes).float()
        smooth = one_hot * (1 - self.smoothing_param) + self.smoothing_param / classes
        return torch.sum(-smooth * F.log_softmax(output[valid], dim=-1), dim=-1).mean()


class PrecisionMeter:
    def __init__(self, topk=(1,), num_classes=5):
        self.topk, self.num_classes = topk, num_classes
        self.correct = {k: 0.0 for k in topk}
        self.total = 0

    def update(self, model_output, target):
        _, pred = model_output.topk(max(self.topk), dim=1)
        if target.dim() == 1:
            target = convert_to_one_hot(target.unsqueeze(1), self.num_classes)
        for k in self.topk:
            self.correct[k] += torch.gather(target, 1, pred[:, :k]).sum().item() / k
        self.total += target.shape[0]

    @property
    def value(self):
        return {f"top_{k}": self.correct[k] / max(self.total, 1) for k in self.topk}


if __name__ == "__main__":
    model = nn.Linear(10, 5)
    inputs, targets = torch.randn(8, 10), torch.randint(0, 5, (8,))
    outputs = model(inputs)
    print(LabelSmoothingCrossEntropyLoss()(outputs, targets).item())
    meter = PrecisionMeter(topk=(1, 2))
    meter.update(outputs.detach(), targets)
    print(meter.value)
