# source: https://github.com/huggingface/pytorch-image-models/pull/913
# error: (Mixup on CPU batches, on a machine without CUDA) AssertionError: Torch not compiled with CUDA enabled (in one_hot, via mixup_target)
# bug: the label-mixing helpers one_hot/mixup_target take a device argument that defaults to
#      'cuda', and Mixup.__call__ calls mixup_target without one, so the mixed targets are always
#      built on the GPU, whatever device the batch x is on: CPU training fails (and a batch on
#      another GPU gets targets on the current one). The fix (PR 913, merged) passes x.device; the
#      call line is marked. No rule covers a callee's hard-coded default device that the caller
#      leaves in place; DL302 (a hard-coded 'cuda' in a function of tensor arguments) is the
#      closest. This script fails on a CPU-only machine by design: that is the reported failure.
# (numpy's random draws of the original are replaced by Python's random module.)
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
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing)  # expect: DL302
        return x, target


if __name__ == "__main__":
    mixup_fn = Mixup(mixup_alpha=1., prob=1.0, label_smoothing=0., num_classes=4)
    x, labels = torch.rand(16, 3, 8, 8), torch.randint(0, 4, (16,))
    x, labels = mixup_fn(x, labels)
    print(x.shape, labels.sum(dim=1))
