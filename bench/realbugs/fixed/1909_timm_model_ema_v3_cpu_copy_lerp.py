# source: https://github.com/huggingface/pytorch-image-models/issues/2127
# fixed twin: each model tensor is moved to the EMA copy's device before the lerp, as the maintainer's fix does.
from copy import deepcopy

import torch
import torch.nn as nn


class ModelEmaV3(nn.Module):
    def __init__(self, model, decay=0.9999, min_decay=0.0, update_after_step=0, device=None, foreach=True):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.min_decay = min_decay
        self.update_after_step = update_after_step
        self.device = device
        self.foreach = foreach
        if self.device is not None and torch.device(device) != next(model.parameters()).device:
            self.foreach = False
            self.module.to(device=device)

    def get_decay(self, step=None):
        if step is None:
            return self.decay
        step = max(0, step - self.update_after_step - 1)
        if step <= 0:
            return 0.0
        return max(self.min_decay, min(self.decay, 1 - (1 + step) ** -0.75))

    @torch.no_grad()
    def update(self, model, step=None):
        decay = self.get_decay(step)
        ema_sd, model_sd = self.module.state_dict(), model.state_dict()
        if self.foreach:
            ema_lerp = [v for v in ema_sd.values() if v.is_floating_point()]
            model_lerp = [v for v in model_sd.values() if v.is_floating_point()]
            torch._foreach_lerp_(ema_lerp, model_lerp, weight=1.0 - decay)
        else:
            for ema_v, model_v in zip(ema_sd.values(), model_sd.values()):
                if ema_v.is_floating_point():
                    ema_v.lerp_(model_v.to(device=self.device), weight=1.0 - decay)
                else:
                    ema_v.copy_(model_v)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


def train(steps=3):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Linear(8, 2)).to(device)
    model_ema = ModelEmaV3(model, decay=0.99, device="cpu")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = torch.randn(16, 8, device=device), torch.randint(0, 2, (16,), device=device)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model_ema.update(model, step=step)
    with torch.no_grad():
        return model_ema(torch.randn(4, 8)).shape


if __name__ == "__main__":
    print(train())
