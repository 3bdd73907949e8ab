# source: https://github.com/lucidrains/ema-pytorch/pull/31
# error: KarrasEMA.update_moving_average fails with both models on CUDA because the decay stays on the CPU (the PR's description; a device-mismatch RuntimeError in lerp_)
# bug: the post-hoc (Karras) EMA wrapper counts its steps in a registered buffer; the wrapper itself
#      is usually left on the CPU while the online model and its deep-copied EMA model live on the GPU.
#      The decay property computes beta from that buffer, so beta is a CPU tensor, and lerp_ of the
#      CUDA EMA weights with it as the weight mixes devices. The PR moved the decay to the weights'
#      device; the maintainer fixed it another way (commit 1aa934c: beta computed from
#      self.step.item(), a Python float); the line that commit changed is marked (no rule covers a
#      decay tensor derived from a host buffer; DL201 is the closest).
from copy import deepcopy

import torch
import torch.nn as nn


class KarrasEMA(nn.Module):
    def __init__(self, model, gamma=6.94, update_every=1):
        super().__init__()
        self.gamma = gamma
        self.online_model = [model]
        self.ema_model = deepcopy(model)
        for p in self.ema_model.parameters():
            p.detach_()
        self.update_every = update_every
        self.register_buffer("initted", torch.tensor(False))
        self.register_buffer("step", torch.tensor(0))

    @property
    def model(self):
        return self.online_model[0]

    @property
    def beta(self):
        return (1 - 1 / (self.step + 1)) ** (1 + self.gamma)  # expect: DL201

    def update(self):
        step = self.step.item()
        self.step += 1
        if step % self.update_every != 0:
            return
        if not self.initted.item():
            for ma, cur in zip(self.ema_model.parameters(), self.model.parameters()):
                ma.data.copy_(cur.data)
            self.initted.data.copy_(torch.tensor(True))
        self.update_moving_average(self.ema_model, self.model)

    @torch.no_grad()
    def update_moving_average(self, ma_model, current_model):
        current_decay = self.beta
        for current_params, ma_params in zip(current_model.parameters(), ma_model.parameters()):
            ma_params.data.lerp_(current_params.data, 1.0 - current_decay)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    ema = KarrasEMA(net, gamma=6.94)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for _ in range(3):
        loss = net(torch.randn(4, 8, device=device)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update()
    print(ema.step.item(), ema.ema_model(torch.randn(2, 8, device=device)).shape)
