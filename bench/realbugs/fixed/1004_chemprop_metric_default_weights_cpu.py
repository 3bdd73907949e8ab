# source: https://github.com/chemprop/chemprop/pull/1296
# fixed twin: the default per-sample weights are made on the targets' device (commit 31103c1).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Metric(nn.Module):
    def __init__(self, task_weights=1.0):
        super().__init__()
        task_weights = torch.as_tensor(task_weights, dtype=torch.float).view(1, -1)
        self.register_buffer("task_weights", task_weights)
        self.register_buffer("total_loss", torch.tensor(0.0))
        self.register_buffer("num_samples", torch.tensor(0))

    def update(self, preds, targets, mask=None, weights=None):
        mask = torch.ones_like(targets, dtype=torch.bool) if mask is None else mask
        weights = torch.ones(targets.shape[0], dtype=torch.float, device=targets.device) if weights is None else weights
        L = self._unreduced(preds, targets)
        L = L * weights.view(-1, 1) * self.task_weights * mask
        self.total_loss += L.sum()
        self.num_samples += mask.sum()

    def compute(self):
        return self.total_loss / self.num_samples

    def forward(self, preds, targets, mask=None, weights=None):
        self.update(preds, targets, mask, weights)
        return self.compute()

    def _unreduced(self, preds, targets):
        raise NotImplementedError


class BCELoss(Metric):
    def _unreduced(self, preds, targets):
        return F.binary_cross_entropy_with_logits(preds, targets, reduction="none")


class BinaryMCCLoss(Metric):
    def update(self, preds, targets, mask=None, weights=None):
        mask = torch.ones_like(targets, dtype=torch.bool) if mask is None else mask
        weights = torch.ones(targets.shape[0], dtype=torch.float, device=targets.device) if weights is None else weights
        if not (0 <= preds.min() and preds.max() <= 1):
            preds = preds.sigmoid()
        w = weights.view(-1, 1)
        self.tp = (targets * preds * w * mask).sum(0)
        self.fp = ((1 - targets) * preds * w * mask).sum(0)
        self.tn = ((1 - targets) * (1 - preds) * w * mask).sum(0)
        self.fn = (targets * (1 - preds) * w * mask).sum(0)

    def compute(self):
        tp, fp, tn, fn = self.tp, self.fp, self.tn, self.fn
        mcc = (tp * tn - fp * fn) / ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn) + 1e-8).sqrt()
        return 1 - (mcc * self.task_weights).mean()


class BinaryClassificationFFN(nn.Module):
    def __init__(self, n_tasks, criterion, hidden=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.ReLU(), nn.Linear(hidden, n_tasks))
        self.criterion = criterion

    def forward(self, x):
        return self.net(x)


if __name__ == "__main__":
    device = "mps" if torch.backends.mps.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")
    task_dim = 3
    for crit in (BCELoss(task_weights=torch.ones(task_dim)), BinaryMCCLoss(task_weights=torch.ones(task_dim))):
        predictor = BinaryClassificationFFN(task_dim, crit)
        predictor.to(device=device)
        x = torch.randn(10, 4).to(device=device)
        y = torch.randint(0, 2, (10, task_dim)).float().to(device=device)
        print(type(crit).__name__, float(predictor.criterion(predictor(x), y)))
