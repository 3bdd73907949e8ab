# source: https://github.com/facebookresearch/aepsych/pull/672
# fixed twin: the train_inputs getter returns, and the setter stores, a new tuple of the moved tensors, as PR 672 does.
from typing import Optional, Tuple

import torch
import torch.nn as nn


class GPModelMixin(nn.Module):
    _train_inputs: Optional[Tuple[torch.Tensor, ...]]
    _train_targets: Optional[torch.Tensor]

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def train_inputs(self) -> Optional[Tuple[torch.Tensor, ...]]:
        if self._train_inputs is None:
            return None
        # a new tuple of the moved inputs
        return tuple([input.to(self.device) for input in self._train_inputs])

    @train_inputs.setter
    def train_inputs(self, train_inputs: Optional[Tuple[torch.Tensor, ...]]) -> None:
        if train_inputs is None:
            self._train_inputs = None
        else:
            inputs = tuple([input.to(self.device) for input in train_inputs])
            self._train_inputs = inputs

    @property
    def train_targets(self) -> Optional[torch.Tensor]:
        if self._train_targets is None:
            return None
        return self._train_targets.to(self.device)

    @train_targets.setter
    def train_targets(self, train_targets: Optional[torch.Tensor]) -> None:
        self._train_targets = None if train_targets is None else train_targets.to(self.device)


class ExactGP(GPModelMixin):
    def __init__(self, dim=2):
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.zeros(dim))
        self.log_noise = nn.Parameter(torch.tensor(-2.0))
        self._train_inputs = None
        self._train_targets = None

    def kernel(self, a, b):
        a = a / self.log_lengthscale.exp()
        b = b / self.log_lengthscale.exp()
        return torch.exp(-0.5 * torch.cdist(a, b).pow(2))

    def set_train_data(self, inputs=None, targets=None):
        self.train_inputs = None if inputs is None else (inputs,)
        self.train_targets = targets

    def posterior_mean(self, x):
        (train_x,) = self.train_inputs
        k_xx = self.kernel(train_x, train_x) + self.log_noise.exp() * torch.eye(len(train_x), device=self.device)
        k_sx = self.kernel(x, train_x)
        return k_sx @ torch.linalg.solve(k_xx, self.train_targets)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ExactGP().to(device)
    x = torch.rand(10, 2)
    model.set_train_data(x, torch.sin(x.sum(1)))
    print(model.posterior_mean(torch.rand(3, 2, device=device)).shape)
