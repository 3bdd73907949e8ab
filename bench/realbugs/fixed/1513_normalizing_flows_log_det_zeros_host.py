# source: https://github.com/tonyduan/normalizing-flows/pull/6
# fixed twin: the log-determinant accumulators are made on the input's device, as the PR's final commits do (its other change, sample() returning a CPU tensor, is left out).
import math

import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal
from torch.nn import init


class FCNN(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim):
        super().__init__()
        self.network = nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.Tanh(),
                                     nn.Linear(hidden_dim, out_dim))

    def forward(self, x):
        return self.network(x)


class MAF(nn.Module):
    def __init__(self, dim, hidden_dim=8, base_network=FCNN):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleList([base_network(i, 2, hidden_dim) for i in range(1, dim)])
        self.initial_param = nn.Parameter(torch.Tensor(2))
        init.uniform_(self.initial_param, -math.sqrt(0.5), math.sqrt(0.5))

    def forward(self, x):
        z = torch.zeros_like(x)
        log_det = torch.zeros(z.shape[0], device=x.device)
        for i in range(self.dim):
            if i == 0:
                mu, alpha = self.initial_param[0], self.initial_param[1]
            else:
                out = self.layers[i - 1](x[:, :i])
                mu, alpha = out[:, 0], out[:, 1]
            z[:, i] = (x[:, i] - mu) / torch.exp(alpha)
            log_det -= alpha
        return z.flip(dims=(1,)), log_det

    def inverse(self, z):
        x = torch.zeros_like(z)
        log_det = torch.zeros(z.shape[0], device=z.device)
        z = z.flip(dims=(1,))
        for i in range(self.dim):
            if i == 0:
                mu, alpha = self.initial_param[0], self.initial_param[1]
            else:
                out = self.layers[i - 1](x[:, :i])
                mu, alpha = out[:, 0], out[:, 1]
            x[:, i] = mu + torch.exp(alpha) * z[:, i]
            log_det += alpha
        return x, log_det


class NormalizingFlowModel(nn.Module):
    def __init__(self, prior, flows):
        super().__init__()
        self.prior = prior
        self.flows = nn.ModuleList(flows)

    def forward(self, x):
        m, _ = x.shape
        log_det = torch.zeros(m, device=x.device)
        for flow in self.flows:
            x, ld = flow.forward(x)
            log_det += ld
        return x, self.prior.log_prob(x), log_det

    def inverse(self, z):
        m, _ = z.shape
        log_det = torch.zeros(m, device=z.device)
        for flow in self.flows[::-1]:
            z, ld = flow.inverse(z)
            log_det += ld
        return z, log_det

    def sample(self, n_samples):
        x, _ = self.inverse(self.prior.sample((n_samples,)))
        return x


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    prior = MultivariateNormal(torch.zeros(2).to(device), torch.eye(2).to(device))
    model = NormalizingFlowModel(prior, [MAF(dim=2), MAF(dim=2)]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
    x = torch.randn(64, 2).to(device)
    z, prior_logprob, log_det = model(x)
    loss = -torch.mean(prior_logprob + log_det)
    loss.backward()
    optimizer.step()
    print(loss.item(), model.sample(4).shape)
