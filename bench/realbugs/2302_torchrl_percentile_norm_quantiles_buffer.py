# source: https://github.com/pytorch/rl/pull/4241
# error: RuntimeError: quantile() q tensor must be on the same device as the input tensor
# bug: DreamerV3's actor loss keeps a percentile return normaliser as a submodule; the normaliser
#      stores the quantile levels (0.05, 0.95) as a buffer made on the CPU. The actor network handed
#      to the loss is moved to the GPU, but the loss module itself is not (the user never calls
#      loss.to(device)), so the lambda-returns it normalises are on the GPU while the quantile
#      levels stay on the host, and torch.quantile rejects the pair. The merged fix casts the levels
#      to the input's device and dtype where they are used; that line is marked (DL201: the closest
#      rule, an operation meeting a host buffer of an unmoved module with GPU data).
import torch
import torch.nn as nn


class PercentileValueNorm(nn.Module):
    def __init__(self, quantiles=(0.05, 0.95), rate=0.01, min_scale=1.0):
        super().__init__()
        self.rate = rate
        self.min_scale = min_scale
        self.register_buffer("_q", torch.tensor(quantiles))
        self.low = None
        self.high = None

    def update(self, x):
        flat = x.detach().reshape(-1)
        lo_hi = torch.quantile(flat, self._q, dim=0)  # expect: DL201
        if self.low is None:
            self.low, self.high = lo_hi[0], lo_hi[1]
        else:
            self.low = torch.lerp(self.low, lo_hi[0], self.rate)
            self.high = torch.lerp(self.high, lo_hi[1], self.rate)

    def scale(self):
        return torch.clamp(self.high - self.low, min=self.min_scale)


class Actor(nn.Module):
    def __init__(self, obs_dim=8, n_act=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 32), nn.ELU(), nn.Linear(32, n_act))

    def forward(self, obs):
        return torch.distributions.Categorical(logits=self.net(obs))


class DreamerV3ActorLoss(nn.Module):
    def __init__(self, actor, entropy_coef=3e-4):
        super().__init__()
        self.actor = actor
        self.entropy_coef = entropy_coef
        self.retnorm = PercentileValueNorm()

    def forward(self, obs, actions, lambda_target, value):
        self.retnorm.update(lambda_target)
        adv = (lambda_target - value) / self.retnorm.scale()
        dist = self.actor(obs)
        pg = -(dist.log_prob(actions) * adv.detach()).mean()
        return pg - self.entropy_coef * dist.entropy().mean()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    actor = Actor().to(device)
    loss_module = DreamerV3ActorLoss(actor)
    opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    for _ in range(3):
        obs = torch.randn(15, 16, 8, device=device)
        actions = torch.randint(0, 4, (15, 16), device=device)
        lambda_target = torch.randn(15, 16, device=device) * 5
        value = torch.randn(15, 16, device=device)
        loss = loss_module(obs, actions, lambda_target, value)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())
