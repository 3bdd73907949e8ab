# source: https://github.com/kornia/kornia/pull/2215
# error: Expected all tensors to be on the same device (kornia's augmentation tests on CUDA, issue 2212)
# bug: an auto-augment OperationBase wraps a kornia augmentation and gates it per sample with a
#      differentiable probability: it installs a RelaxedBernoulli over its own probability parameter
#      as the augmentation's batch-probability sampler, and forward blends the augmented and the
#      original input with the sampled batch_prob. Kornia applies augmentations to GPU batches
#      without moving the augmentation modules (their parameters are sampled on the CPU), so
#      batch_prob is a host tensor while the input and the augmented output are on the GPU. The
#      merged fix moves batch_prob to input.device on the line marked (DL201: the host batch_prob
#      meets the GPU input in the blend on the next line; the fix changed the marked line).
from typing import Dict, Optional

import torch
import torch.nn as nn
from torch.distributions import Bernoulli, RelaxedBernoulli


class RandomBrightness(nn.Module):
    def __init__(self, brightness=(0.8, 1.2), p=0.5):
        super().__init__()
        self.p = p
        self.brightness = brightness
        self._p_gen = Bernoulli(torch.tensor(float(p)))

    def forward_parameters(self, batch_shape) -> Dict[str, torch.Tensor]:
        low, high = self.brightness
        factor = torch.empty(batch_shape[0]).uniform_(low, high)
        batch_prob = self._p_gen.rsample((batch_shape[0],)) if self._p_gen.has_rsample \
            else self._p_gen.sample((batch_shape[0],))
        return {"brightness_factor": factor, "batch_prob": batch_prob.reshape(-1)}

    def forward(self, input, params: Optional[Dict[str, torch.Tensor]] = None):
        if params is None:
            params = self.forward_parameters(input.shape)
        factor = params["brightness_factor"].to(input)
        return (input * factor.view(-1, 1, 1, 1)).clamp(0, 1)


class OperationBase(nn.Module):
    def __init__(self, operation, temperature=0.1):
        super().__init__()
        self.op = operation
        self.probability_range = (1e-7, 1 - 1e-7)
        self._probability = nn.Parameter(torch.empty(1).fill_(self.op.p))
        self.register_buffer("temperature", torch.empty(1).fill_(temperature))

    @property
    def probability(self):
        return self._probability.clamp(*self.probability_range)

    def _update_probability_gen(self, relaxation: bool) -> None:
        if relaxation:
            self.op._p_gen = RelaxedBernoulli(self.temperature, self.probability)
        else:
            self.op._p_gen = Bernoulli(self.probability)

    def forward_parameters(self, batch_shape):
        self._update_probability_gen(relaxation=True)
        return self.op.forward_parameters(batch_shape)

    def forward(self, input, params: Optional[Dict[str, torch.Tensor]] = None):
        if params is None:
            params = self.forward_parameters(input.shape)
        batch_prob = params["batch_prob"][(...,) + ((None,) * (len(input.shape) - 1))]  # expect: DL201
        return batch_prob * self.op(input, params=params) + (1 - batch_prob) * input


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    op = OperationBase(RandomBrightness(p=0.5))
    images = torch.rand(4, 3, 16, 16, device=device)
    out = op(images)
    out.mean().backward()
    print(out.shape, op._probability.grad)
