# source: https://github.com/pfnet-research/pfhedge/pull/617
# fixed twin: the cost tensor is moved to the spot's device and dtype, as PR #577 (commit bdd9653) does.
import torch
import torch.nn as nn


def pl(spot, unit, cost=None, payoff=None, deduct_first_cost=True):
    if spot.size() != unit.size():
        raise RuntimeError("unmatched sizes")
    output = unit[..., :-1].mul(spot.diff(dim=-1)).sum(dim=(-2, -1))
    if payoff is not None:
        output -= payoff
    if cost is not None:
        c = torch.tensor(cost).to(spot).unsqueeze(0).unsqueeze(-1)
        output -= (spot[..., 1:] * unit.diff(dim=-1).abs() * c).sum(dim=(-2, -1))
        if deduct_first_cost:
            output -= (spot[..., [0]] * unit[..., [0]].abs() * c).sum(dim=(-2, -1))
    return output


class BrownianStock:
    def __init__(self, sigma=0.2, cost=1e-3):
        self.sigma, self.cost = sigma, cost

    def simulate(self, n_paths, n_steps, device):
        dt = 1 / 250
        noise = torch.randn(n_paths, n_steps, device=device) * self.sigma * dt ** 0.5
        self.spot = torch.exp(noise.cumsum(dim=1))
        return self.spot


class Hedger(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())

    def compute_hedge(self, spot):
        n_steps = spot.size(1)
        time = torch.linspace(1, 0, n_steps, device=spot.device).expand_as(spot)
        features = torch.stack([spot.log(), time], dim=-1)
        return self.model(features).squeeze(-1)

    def compute_pl(self, stock, strike=1.0):
        spot = stock.spot
        unit = self.compute_hedge(spot)
        payoff = (spot[:, -1] - strike).clamp(min=0)
        return pl(spot.unsqueeze(1), unit.unsqueeze(1), cost=[stock.cost], payoff=payoff)


def fit(hedger, stock, device, n_epochs=3):
    hedger.to(device)
    optimizer = torch.optim.Adam(hedger.parameters(), lr=1e-2)
    for _ in range(n_epochs):
        stock.simulate(256, 20, device)
        loss = -hedger.compute_pl(stock).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(fit(Hedger(), BrownianStock(), device))
