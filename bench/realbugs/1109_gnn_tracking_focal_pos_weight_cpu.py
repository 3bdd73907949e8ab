# source: https://github.com/gnn-tracking/gnn_tracking/pull/449
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the edge-classification focal loss defaults its pos_weight to a one-element tensor made in
#      __init__ with T([1.0]) (on the CPU) and records it as a hyperparameter; _forward hands it to the
#      scripted focal-loss kernel, which multiplies it with the CUDA edge weights. Being 1-D, not a
#      0-dim scalar, the CPU tensor is rejected. The fix (commit 88b0bc3, PR 449) builds the default in
#      _forward with device=w.device; the changed default line is marked (DL202).
import inspect
from abc import ABC, abstractmethod
from types import SimpleNamespace

import torch
from torch import Tensor as T


class HyperparametersMixin:
    def save_hyperparameters(self):
        frame = inspect.currentframe().f_back
        args = {k: v for k, v in frame.f_locals.items() if k not in ("self", "kwargs", "__class__")}
        merged = dict(vars(getattr(self, "hparams", SimpleNamespace())))
        merged.update(args)
        self.hparams = SimpleNamespace(**merged)


@torch.jit.script
def _binary_focal_loss(*, inpt: T, target: T, alpha: float, gamma: float, pos_weight: T) -> T:
    probs_pos = inpt
    probs_neg = 1 - inpt
    pos_term = -alpha * pos_weight * probs_neg.pow(gamma) * target * probs_pos.log()
    neg_term = -(1.0 - alpha) * probs_pos.pow(gamma) * (1.0 - target) * probs_neg.log()
    return torch.mean(pos_term + neg_term)


def binary_focal_loss(*, inpt, target, alpha=0.25, gamma=2.0, pos_weight=None):
    assert pos_weight is not None
    return _binary_focal_loss(inpt=inpt, target=target, alpha=alpha, gamma=gamma, pos_weight=pos_weight)


class FalsifyLowPtEdgeWeightLoss(torch.nn.Module, ABC, HyperparametersMixin):
    def __init__(self, *, pt_thld=0.0):
        super().__init__()
        self.save_hyperparameters()

    def forward(self, *, w, y, pt=None):
        if pt is not None and self.hparams.pt_thld > 0:
            y = y & (pt > self.hparams.pt_thld)
        return self._forward(y=y.float(), w=w)

    @abstractmethod
    def _forward(self, *, w, y):
        pass


class EdgeWeightFocalLoss(FalsifyLowPtEdgeWeightLoss):
    def __init__(self, *, alpha=0.25, gamma=2.0, pos_weight=None, **kwargs):
        super().__init__(**kwargs)
        if pos_weight is None:
            pos_weight = T([1.0])  # expect: DL202
        self.save_hyperparameters()

    def _forward(self, *, w, y):
        return binary_focal_loss(
            inpt=w, target=y, alpha=self.hparams.alpha, gamma=self.hparams.gamma, pos_weight=self.hparams.pos_weight
        )


class EdgeClassifier(torch.nn.Module):
    def __init__(self, node_dim=4, hidden=8):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(2 * node_dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))

    def forward(self, x, edge_index):
        return torch.sigmoid(self.mlp(torch.cat([x[edge_index[0]], x[edge_index[1]]], dim=1))).squeeze(1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = EdgeClassifier().to(device)
    loss_fn = EdgeWeightFocalLoss(alpha=0.3)
    x = torch.randn(10, 4, device=device)
    edge_index = torch.randint(0, 10, (2, 30), device=device)
    y = torch.rand(30, device=device) > 0.5
    loss = loss_fn(w=model(x, edge_index), y=y, pt=torch.rand(10, device=device)[edge_index[0]])
    loss.backward()
    print(loss.item())
