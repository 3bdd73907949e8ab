# source: https://github.com/facebookresearch/aepsych/pull/672
# error: (reported by the maintainers) the training inputs were not on the model's device: the move "wasn't actually doing what we expected"; a GPU model then meets CPU training data (Expected all tensors to be on the same device)
# bug: the model mixin keeps its training data in private attributes behind properties meant to
#      guarantee they follow the model's device (that of its first parameter). The train_inputs
#      getter and setter both loop over the tuple calling input.to(self.device) and throw the result
#      away - Tensor.to is not in place - then return / store the original CPU tensors. The fix
#      (PR 672, commit a5bf63d7) builds a new tuple of the moved tensors in both; the two discarded
#      moves are marked (DL101: a tensor move whose result is thrown away).
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
        # meant to put every training input on the model's device
        for input in self._train_inputs:
            input.to(self.device)  # expect: DL101
        return self._train_inputs

    @train_inputs.setter
    def train_inputs(self, train_inputs: Optional[Tuple[torch.Tensor, ...]]) -> None:
        if train_inputs is None:
            self._train_inputs = None
        else:
            for input in train_inputs:
                input.to(self.device)  # expect: DL101
            self._train_inputs = train_inputs

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
