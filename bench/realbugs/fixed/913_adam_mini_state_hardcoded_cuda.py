# source: https://github.com/zyushun/Adam-mini/pull/1
# fixed twin: the optimizer state is made with .to(device), a module-level device chosen from torch.cuda.is_available(), as commit 9a86f05 does.
import math

import torch
import torch.nn as nn
from torch.optim.optimizer import Optimizer

device = "cuda" if torch.cuda.is_available() else "cpu"


class Adam_mini(Optimizer):
    def __init__(self, model=None, weight_decay=0.1, lr=1e-3, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.model = model
        self.world_size = torch.cuda.device_count()
        optim_groups = []
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                decay = 0 if ("norm" in name or "ln_f" in name) else weight_decay
                optim_groups.append({"name": name, "params": param, "weight_decay": decay})
        defaults = dict(lr=lr, beta1=beta1, beta2=beta2, epsilon=epsilon)
        super().__init__(optim_groups, defaults)

    def step(self):
        with torch.no_grad():
            for group in self.param_groups:
                beta1, beta2, lr, epsilon = group["beta1"], group["beta2"], group["lr"], group["epsilon"]
                for p in group["params"]:
                    state = self.state[p]
                    if len(state) == 0:
                        dimension = torch.tensor(p.data.numel()).to(device).to(torch.float32)
                        state["m"] = torch.zeros_like(p.data).to(torch.float32)
                        state["iteration"] = 0
                        state["vmean"] = torch.tensor(0.0).to(device)
                        state["dimension"] = dimension.item()
                    if p.grad is None:
                        tmp_lr = torch.tensor(0.0).to(device)
                    else:
                        grad = p.grad.data.to(torch.float32)
                        tmp_lr = torch.sum(grad * grad)
                    tmp_lr = tmp_lr / state["dimension"]
                    if group["weight_decay"] != 0:
                        p.data.mul_(1 - lr * group["weight_decay"])
                    state["iteration"] += 1
                    state["vmean"].mul_(beta2).add_(tmp_lr, alpha=1 - beta2)
                    if p.grad is None:
                        continue
                    state["m"].lerp_(grad, 1 - beta1)
                    bias_correction_1 = 1 - beta1 ** state["iteration"]
                    bias_correction_2_sqrt = math.sqrt(1 - beta2 ** state["iteration"])
                    h = (state["vmean"].sqrt() / bias_correction_2_sqrt).add_(epsilon)
                    stepsize = ((1 / bias_correction_1) / h).view(1)
                    p.add_(-lr * state["m"] * stepsize.to(state["m"].device))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 1)).to(device)
    optimizer = Adam_mini(model=model)
    for _ in range(3):
        loss = model(torch.randn(4, 8, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())
