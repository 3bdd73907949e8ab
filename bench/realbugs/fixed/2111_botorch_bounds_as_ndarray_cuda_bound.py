# source: https://github.com/meta-pytorch/botorch/pull/1567
# fixed twin: tensor bounds are moved to the CPU before they are written into the numpy array (PR 1567).
import numpy as np
import torch
import torch.nn as nn
from torch import Tensor


class GreaterThan(nn.Module):
    def __init__(self, lower_bound):
        super().__init__()
        self.register_buffer("lower_bound", torch.tensor(lower_bound))
        self.upper_bound = None


class ToyGP(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.tensor([0.5]))
        self.raw_lengthscale = nn.Parameter(torch.tensor([[1.0, 1.0]]))
        self.raw_noise_constraint = GreaterThan(1e-4)

    def loss(self, x, y):
        pred = (x / self.raw_lengthscale.abs()).sum(dim=-1)
        return ((pred - y) ** 2).mean() + self.raw_noise.abs().sum()


def get_parameters_and_bounds(model):
    params = dict(model.named_parameters())
    bounds = {}
    for name, module in model.named_modules():
        if isinstance(module, GreaterThan):
            bounds[name.replace("_constraint", "")] = (module.lower_bound, module.upper_bound)
    return params, bounds


def get_bounds_as_ndarray(parameters, bounds):
    inf = float("inf")
    full_size = sum(param.numel() for param in parameters.values())
    out = np.full((full_size, 2), (-inf, inf))
    index = 0
    for name, param in parameters.items():
        size = param.numel()
        if name in bounds:
            lower, upper = bounds[name]
            lower = -inf if lower is None else lower
            upper = inf if upper is None else upper
            if isinstance(lower, Tensor):
                lower = lower.cpu()
            if isinstance(upper, Tensor):
                upper = upper.cpu()
            out[index : index + size, 0] = lower
            out[index : index + size, 1] = upper
        index += size
    return None if np.isinf(out).all() else out


def fit_with_scipy(model, x, y, steps=20, lr=0.05):
    params, bounds = get_parameters_and_bounds(model)
    box = get_bounds_as_ndarray(params, bounds)
    for _ in range(steps):
        loss = model.loss(x, y)
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            index = 0
            for p, g in zip(params.values(), grads):
                p -= lr * g
                lo, hi = box[index : index + p.numel()].T
                p.copy_(p.clamp(min=float(lo.min()), max=float(hi.max())))
                index += p.numel()
    return float(model.loss(x, y))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gp = ToyGP().to(device)
    x = torch.rand(16, 2, device=device)
    print(fit_with_scipy(gp, x, x.sum(dim=-1)))
