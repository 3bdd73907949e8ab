# source: https://github.com/teamtomo/torch-cubic-spline-grids/pull/13
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (grid moved with .to(device), spline matrix still on the host)
# bug: the spline grid module keeps its learnable control points as a parameter, but the
#      spline's characteristic 4x4 matrix is a module-level constant bound into the class's
#      interpolation function with functools.partial. Moving a grid (or a model holding one) to
#      the GPU moves the control points only, and forward combines GPU control points with the
#      host matrix. The merged fix (commit adf8b8c) makes the matrix a class attribute that
#      __init__ registers as a non-persistent buffer, and forward passes it to the interpolation
#      function (PR 14 the same day made forward pass the registered buffer, not the class
#      attribute; the twin has both). The partial binding and the forward call that the fix changed are
#      marked (DL103: a tensor the module uses that is not registered, so .to(device) skips it).
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

    def forward(self, u):
        u = torch.atleast_2d(torch.as_tensor(u, dtype=torch.float32))
        return self._interpolation_function(self._data, u)  # expect: DL103


class CubicBSplineGrid1d(CubicSplineGrid):
    _interpolation_function = partial(interpolate_grid_1d, matrix=CUBIC_B_SPLINE_MATRIX)  # expect: DL103


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
