# source: https://github.com/toshas/torch_truncnorm/issues/2
# fixed twin: the uniforms are drawn on the device of the distribution's constants, as the reporter's fix does.
import math

import torch
import torch.nn as nn
from torch.distributions import Distribution, constraints
from torch.distributions.utils import broadcast_all

CONST_SQRT_2 = math.sqrt(2)
CONST_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class TruncatedStandardNormal(Distribution):
    arg_constraints = {"a": constraints.real, "b": constraints.real}
    has_rsample = True

    def __init__(self, a, b, validate_args=None):
        self.a, self.b = broadcast_all(a, b)
        super().__init__(self.a.size(), validate_args=validate_args)
        eps = torch.finfo(self.a.dtype).eps
        self._dtype_min_gt_0 = eps
        self._dtype_max_lt_1 = 1 - eps
        self._big_phi_a = self._big_phi(self.a)
        self._big_phi_b = self._big_phi(self.b)
        self._Z = (self._big_phi_b - self._big_phi_a).clamp_min(eps)

    @property
    def support(self):
        return constraints.interval(self.a, self.b)

    @staticmethod
    def _big_phi(x):
        return 0.5 * (1 + (x / CONST_SQRT_2).erf())

    @staticmethod
    def _inv_big_phi(x):
        return CONST_SQRT_2 * (2 * x - 1).erfinv()

    def icdf(self, value):
        return self._inv_big_phi(self._big_phi_a + value * self._Z)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        p = torch.empty(shape, device=self._big_phi_a.device).uniform_(self._dtype_min_gt_0, self._dtype_max_lt_1)
        return self.icdf(p)


class TruncatedNormal(TruncatedStandardNormal):
    def __init__(self, loc, scale, a, b, validate_args=None):
        self.loc, self.scale, a, b = broadcast_all(loc, scale, a, b)
        a = (a - self.loc) / self.scale
        b = (b - self.loc) / self.scale
        super().__init__(a, b, validate_args=validate_args)

    def icdf(self, value):
        return super().icdf(value) * self.scale + self.loc


class BoundedActionHead(nn.Module):
    def __init__(self, features=8, actions=2):
        super().__init__()
        self.mu = nn.Linear(features, actions)
        self.log_std = nn.Parameter(torch.zeros(actions))

    def forward(self, state):
        loc = torch.tanh(self.mu(state))
        scale = self.log_std.exp().expand_as(loc)
        dist = TruncatedNormal(loc, scale, torch.full_like(loc, -1.0), torch.full_like(loc, 1.0))
        return dist.rsample()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    head = BoundedActionHead().to(device)
    actions = head(torch.randn(4, 8, device=device))
    print(actions.shape, bool((actions.abs() <= 1).all()))
