# source: https://github.com/teamtomo/torch-cubic-spline-grids/pull/13
# fixed twin: the spline matrix is a class attribute registered as a non-persistent buffer in __init__ and passed to the interpolation function by forward, as the merged fix (adf8b8c, completed by PR 14, ff0bce5) does, so .to(device) moves it.
from functools import partial

import torch
import torch.nn as nn

CUBIC_B_SPLINE_MATRIX = torch.tensor(
    [[-1.0, 3.0, -3.0, 1.0], [3.0, -6.0, 3.0, 0.0], [-3.0, 0.0, 3.0, 0.0], [1.0, 4.0, 1.0, 0.0]]
) / 6


def interpolate_grid_1d(grid, u, matrix):
    c, w = grid.shape
    grid = torch.cat([grid[:, :1], grid, grid[:, -1:], grid[:, -1:]], dim=1)  # pad edges
    x = u[:, 0].clamp(0, 1) * (w - 1)
    idx0 = x.floor().long().clamp(max=w - 2)
    t = x - idx0
    idx = idx0[:, None] + torch.arange(4, device=u.device)  # (b, 4)
    control_points = grid[:, idx].permute(1, 0, 2)  # (b, c, 4)
    powers = torch.stack([t ** 3, t ** 2, t, torch.ones_like(t)], dim=-1)  # (b, 4)
    weights = powers @ matrix  # (b, 4)
    return torch.einsum("bcp,bp->bc", control_points, weights)


class CubicSplineGrid(nn.Module):
    ndim = 1

    def __init__(self, resolution=(8,), n_channels=1):
        super().__init__()
        self._data = nn.Parameter(torch.zeros(n_channels, *resolution))
        self.register_buffer("interpolation_matrix", self._interpolation_matrix, persistent=False)

    def forward(self, u):
        u = torch.atleast_2d(torch.as_tensor(u, dtype=torch.float32))
        return self._interpolation_function(self._data, u, matrix=self.interpolation_matrix)


class CubicBSplineGrid1d(CubicSplineGrid):
    _interpolation_matrix = CUBIC_B_SPLINE_MATRIX
    _interpolation_function = partial(interpolate_grid_1d)


class DefocusModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.defocus = CubicBSplineGrid1d(resolution=(6,))

    def forward(self, times):
        return self.defocus(times.unsqueeze(-1)).squeeze(-1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = DefocusModel().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    times = torch.rand(64, device=device)
    target = torch.sin(6 * times)
    for _ in range(20):
        loss = (model(times) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(round(loss.item(), 4))
