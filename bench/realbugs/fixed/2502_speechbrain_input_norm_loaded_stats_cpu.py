# source: https://github.com/speechbrain/speechbrain/pull/1841
# fixed twin: forward moves the global statistics to the input before using them, (x - self.glob_mean.data.to(x)) / (self.glob_std.data.to(x)) (PR 1841, commit db23b59), so statistics loaded onto the host meet GPU features on the GPU.
import os
import tempfile

import torch
import torch.nn as nn


class InputNormalization(nn.Module):
    def __init__(self, avg_factor=None, update_until_epoch=3):
        super().__init__()
        self.avg_factor = avg_factor
        self.update_until_epoch = update_until_epoch
        self.glob_mean = torch.tensor([0])
        self.glob_std = torch.tensor([0])
        self.count = 0
        self.weight = 1.0
        self.eps = 1e-10

    def forward(self, x, lengths, epoch=0):
        means, stds = [], []
        for i in range(x.shape[0]):
            size = torch.round(lengths[i] * x.shape[1]).int()
            mean, std = self._compute_current_stats(x[i, :size])
            means.append(mean)
            stds.append(std)
        current_mean = torch.mean(torch.stack(means), dim=0)
        current_std = torch.mean(torch.stack(stds), dim=0)
        if self.training:
            if self.count == 0:
                self.glob_mean = current_mean
                self.glob_std = current_std
            elif epoch < self.update_until_epoch:
                self.weight = 1 / (self.count + 1) if self.avg_factor is None else self.avg_factor
                self.glob_mean = (1 - self.weight) * self.glob_mean.to(current_mean) + self.weight * current_mean
                self.glob_std = (1 - self.weight) * self.glob_std.to(current_std) + self.weight * current_std
            self.count = self.count + 1
        x = (x - self.glob_mean.data.to(x)) / (self.glob_std.data.to(x))
        return x

    def _compute_current_stats(self, x):
        mean = torch.mean(x, dim=0).detach()
        std = torch.std(x, dim=0).detach()
        return mean, torch.max(std, self.eps * torch.ones_like(std))

    def to(self, device):
        self = super().to(device)
        self.glob_mean = self.glob_mean.to(device)
        self.glob_std = self.glob_std.to(device)
        return self

    def _save(self, path):
        torch.save({"count": self.count, "glob_mean": self.glob_mean, "glob_std": self.glob_std}, path)

    def _load(self, path):
        stats = torch.load(path, map_location="cpu")
        self.count = stats["count"]
        self.glob_mean = stats["glob_mean"]
        self.glob_std = stats["glob_std"]


class Checkpointer:
    def __init__(self, directory, recoverables):
        self.directory = directory
        self.recoverables = recoverables

    def save(self):
        for name, obj in self.recoverables.items():
            obj._save(os.path.join(self.directory, name + ".ckpt"))

    def recover(self):
        for name, obj in self.recoverables.items():
            obj._load(os.path.join(self.directory, name + ".ckpt"))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ckpt_dir = tempfile.mkdtemp()
    normalizer = InputNormalization().to(device)
    lengths = torch.ones(4, device=device)
    for step in range(3):
        normalizer(torch.randn(4, 50, 20, device=device), lengths)
    Checkpointer(ckpt_dir, {"normalizer": normalizer}).save()

    evaluator = InputNormalization().to(device)
    Checkpointer(ckpt_dir, {"normalizer": evaluator}).recover()
    evaluator.eval()
    feats = evaluator(torch.randn(2, 50, 20, device=device), torch.ones(2, device=device))
    print(feats.shape)
