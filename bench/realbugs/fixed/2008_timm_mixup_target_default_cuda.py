# source: https://github.com/huggingface/pytorch-image-models/pull/913
# fixed twin: Mixup passes the batch's device (x.device) to mixup_target, as PR 913 does.
import random

import torch


def one_hot(x, num_classes, on_value=1., off_value=0., device='cuda'):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=device).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='cuda'):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value, device=device)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value, device=device)
    return y1 * lam + y2 * (1. - lam)


class Mixup:
    def __init__(self, mixup_alpha=1., prob=1.0, label_smoothing=0.1, num_classes=0):
        assert num_classes > 0, 'num_classes must be set for target generation'
        self.mixup_alpha = mixup_alpha
        self.mix_prob = prob
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes
        self.mixup_enabled = True

    def _params_per_batch(self):
        lam = 1.
        if self.mixup_enabled and random.random() < self.mix_prob:
            lam = float(random.betavariate(self.mixup_alpha, self.mixup_alpha))
        return lam

    def _mix_batch(self, x):
        lam = self._params_per_batch()
        if lam == 1.:
            return 1.
        x_flipped = x.flip(0).mul_(1. - lam)
        x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target):
        assert len(x) % 2 == 0, 'Batch size should be even when using this'
        lam = self._mix_batch(x)
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing, x.device)
        return x, target


if __name__ == "__main__":
    mixup_fn = Mixup(mixup_alpha=1., prob=1.0, label_smoothing=0., num_classes=4)
    x, labels = torch.rand(16, 3, 8, 8), torch.randint(0, 4, (16,))
    x, labels = mixup_fn(x, labels)
    print(x.shape, labels.sum(dim=1))
