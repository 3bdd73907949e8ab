# source: https://github.com/kozistr/pytorch_optimizer/issues/266
# fixed twin: a d_numerator restored on another device is moved to the parameters' device before use (commit e8cfb9b, PR 267).
import io
import math

import torch
import torch.nn as nn


class Prodigy(torch.optim.Optimizer):
    def __init__(self, params, lr=1.0, betas=(0.9, 0.999), beta3=None, d0=1e-6, eps=1e-8):
        defaults = {"lr": lr, "betas": betas, "beta3": beta3, "d": d0, "d0": d0, "d_max": d0, "step": 1, "eps": eps}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        group = self.param_groups[0]
        device = group["params"][0].device
        d_de_nom = torch.tensor([0.0], device=device)
        beta1, beta2 = group["betas"]
        beta3 = group["beta3"] if group["beta3"] is not None else math.sqrt(beta2)
        bias_correction = (1 - beta1 ** group["step"]) / math.sqrt(1 - beta2 ** group["step"])
        d, d0 = group["d"], group["d0"]
        d_lr = d * group["lr"] / bias_correction

        if "d_numerator" not in group:
            group["d_numerator"] = torch.tensor([0.0], device=device)
        elif group["d_numerator"].device != device:
            group["d_numerator"] = group["d_numerator"].to(device)
        d_numerator = group["d_numerator"]
        d_numerator.mul_(beta3)

        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["s"] = torch.zeros_like(p)
                    state["p0"] = p.clone()
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                p0, exp_avg, exp_avg_sq = state["p0"], state["exp_avg"], state["exp_avg_sq"]
                d_numerator.add_(torch.dot(grad.flatten(), (p0 - p).flatten()), alpha=(d / d0) * d_lr)
                exp_avg.mul_(beta1).add_(grad, alpha=d * (1.0 - beta1))
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=d * d * (1.0 - beta2))
                state["s"].mul_(beta3).add_(grad, alpha=(d / d0) * d_lr)
                d_de_nom.add_(state["s"].abs().sum())

        if d_de_nom == 0:
            return None
        d_hat = (d_numerator / d_de_nom).item()
        d_max = max(group["d_max"], d_hat)
        d = min(d_max, max(d, d_hat) * 1.1)
        for group in self.param_groups:
            group["step"] += 1
            group["d_numerator"], group["d"], group["d_max"] = d_numerator, d, d_max
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                p.addcdiv_(state["exp_avg"], state["exp_avg_sq"].sqrt().add_(d * group["eps"]), value=-d_lr)
        return None


def train_steps(model, optimizer, device, steps=3):
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 4, device=device)).pow(2).mean().backward()
        optimizer.step()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(4, 2).to(device)
    optimizer = Prodigy(model.parameters())
    train_steps(model, optimizer, device)
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, map_location="cpu")
    resumed = nn.Linear(4, 2)
    resumed.load_state_dict(checkpoint["model"])
    resumed.to(device)
    resumed_optimizer = Prodigy(resumed.parameters())
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    train_steps(resumed, resumed_optimizer, device)
    print(resumed.weight.sum().item())
