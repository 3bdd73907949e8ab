# source: https://github.com/d2l-ai/d2l-en/pull/1966
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the dog-breed fine-tuning function evaluates the validation loss by summing per-batch CUDA
#      losses (evaluate_loss returns a CUDA scalar) and hands it, detached but still on the GPU, to
#      the plotting animator, which keeps every point and redraws the curves; matplotlib turns the
#      point lists into numpy arrays, which fails for a CUDA tensor. The training-loss points are
#      Python floats (the accumulator calls float()). The merged PR (commit 420f6f9b) appends .cpu();
#      the changed line is marked (DL204: a GPU tensor read by numpy). The plotting is a stand-in
#      that does what matplotlib does with the points (np.asarray); numpy is needed to run it.
import numpy as np
import torch
from torch import nn


class Animator:
    def __init__(self, legend):
        self.legend, self.X, self.Y = legend, None, None

    def plot(self, xs, ys):
        return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)

    def add(self, x, y):
        n = len(y)
        if not self.X:
            self.X, self.Y = [[] for _ in range(n)], [[] for _ in range(n)]
        for i, b in enumerate(y):
            if b is not None:
                self.X[i].append(x)
                self.Y[i].append(b)
        return [self.plot(xs, ys) for xs, ys in zip(self.X, self.Y)]


class Accumulator:
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


loss = nn.CrossEntropyLoss(reduction="none")


def evaluate_loss(data_iter, net, devices):
    l_sum, n = 0.0, 0
    for features, labels in data_iter:
        features, labels = features.to(devices[0]), labels.to(devices[0])
        l_sum += loss(net(features), labels).sum()
        n += labels.numel()
    return l_sum / n


def train(net, train_iter, valid_iter, num_epochs, lr, wd, devices):
    net = nn.DataParallel(net, device_ids=devices).to(devices[0])
    trainer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=wd)
    animator = Animator(legend=["train loss", "valid loss"])
    for epoch in range(num_epochs):
        metric = Accumulator(2)
        for features, labels in train_iter:
            features, labels = features.to(devices[0]), labels.to(devices[0])
            trainer.zero_grad()
            l = loss(net(features), labels).sum()
            l.backward()
            trainer.step()
            metric.add(l, labels.shape[0])
        animator.add(epoch + 1, (metric[0] / metric[1], None))
        if valid_iter is not None:
            valid_loss = evaluate_loss(valid_iter, net, devices)
            animator.add(epoch + 1, (None, valid_loss.detach()))  # expect: DL204
    return animator


if __name__ == "__main__":
    devices = [torch.device("cuda:0")] if torch.cuda.is_available() else [torch.device("cpu")]
    net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 64), nn.ReLU(), nn.Linear(64, 5))
    batches = [(torch.randn(8, 3, 8, 8), torch.randint(0, 5, (8,))) for _ in range(3)]
    print(train(net, batches, batches[:1], 2, 1e-2, 1e-4, devices).Y)
