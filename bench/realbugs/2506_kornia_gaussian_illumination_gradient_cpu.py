# source: https://github.com/kornia/kornia/pull/3457
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: RandomGaussianIllumination's parameter generator builds the illumination gradient on the
#      generator's device, the CPU unless the caller sets the RNG device; the augmentation is called
#      on a CUDA image without being moved (kornia's usual pattern), and its transform adds that
#      host gradient to the GPU image in place. The merged fix (commit ad26a26) moves the gradient
#      to the input's device and dtype before the add; the marker is on the line it changed
#      (DL201: the host gradient meets the GPU input).
import math
from typing import Any, Dict, Optional

import torch
import torch.nn as nn


def gaussian(size, sigma, mean, device=None, dtype=None):
    x = torch.arange(size, device=device, dtype=dtype).unsqueeze(0) - mean
    g = torch.exp(-x.pow(2) / (2 * sigma.pow(2)))
    return g / g.sum(-1, keepdim=True)


class GaussianIlluminationGenerator(nn.Module):
    def __init__(self, gain, center, sigma):
        super().__init__()
        self.gain, self.center, self.sigma = gain, center, sigma
        self.set_rng_device_and_dtype(torch.device("cpu"), torch.float32)

    def set_rng_device_and_dtype(self, device, dtype):
        self.device, self.dtype = device, dtype

    def _uniform(self, shape, bounds):
        return torch.empty(shape, device=self.device, dtype=self.dtype).uniform_(*bounds)

    def forward(self, batch_shape):
        batch_size, channels, height, width = batch_shape
        gain = self._uniform((batch_size, 1, 1, 1), self.gain)
        sigma_x = width * self._uniform((batch_size, 1), self.sigma)
        center_x = torch.round(width * self._uniform((batch_size, 1), self.center))
        sigma_y = height * self._uniform((batch_size, 1), self.sigma)
        center_y = torch.round(height * self._uniform((batch_size, 1), self.center))
        gauss_x = gaussian(width, sigma_x, center_x, device=self.device, dtype=self.dtype).unsqueeze(1)
        gauss_y = gaussian(height, sigma_y, center_y, device=self.device, dtype=self.dtype).unsqueeze(2)
        gradient = (gauss_y @ gauss_x).unsqueeze_(1).repeat(1, channels, 1, 1)
        lo = gradient.amin(dim=(-2, -1), keepdim=True)
        hi = gradient.amax(dim=(-2, -1), keepdim=True)
        gradient = (gradient - lo) / (hi - lo + 1e-8)
        return {"gradient": gain * gradient}


class IntensityAugmentationBase2D(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, input):
        params = self._param_generator(input.shape)
        return self.apply_transform(input.clone(), params, flags={})


class RandomGaussianIllumination(IntensityAugmentationBase2D):
    def __init__(self, gain=(0.01, 0.15), center=(0.1, 0.9), sigma=(0.2, 1.0), p=0.5):
        super().__init__(p=p)
        self._param_generator = GaussianIlluminationGenerator(gain, center, sigma)

        def _apply_transform(input: torch.Tensor, params: Dict[str, torch.Tensor], flags: Dict[str, Any],
                             transform: Optional[torch.Tensor] = None) -> torch.Tensor:
            return input.add_(params["gradient"]).clamp_(0, 1)  # expect: DL201

        self._fn = _apply_transform

    def apply_transform(self, input, params, flags, transform=None):
        return self._fn(input=input, params=params, flags=flags, transform=transform)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    img = torch.rand(1, 3, 64, 64).to(device)
    aug = RandomGaussianIllumination(gain=(0.1, 0.1), p=1.0)
    out = aug(img)
    print(out.shape, round(math.fsum(out.flatten().tolist()) / out.numel(), 3))
