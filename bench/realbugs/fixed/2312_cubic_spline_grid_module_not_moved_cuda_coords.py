# source: https://github.com/teamtomo/torch-cubic-spline-grids/issues/26
# fixed twin: the grid module is moved to the device before it is called (m.to(device)), as the maintainer advised and the user confirmed.
import torch
import torch.nn as nn


def interpolate_grid_3d(grid, u):
    c, d, h, w = grid.shape
    sizes = torch.tensor([d, h, w], device=u.device)
    pos = u.clamp(0, 1) * (sizes - 1)
    idx = pos.round().long()  # nearest control point in each dimension
    values = grid[:, idx[:, 0], idx[:, 1], idx[:, 2]]  # (c, b)
    return values.t()


class CubicBSplineGrid3d(nn.Module):
    def __init__(self, resolution=(2, 2, 2), n_channels=1):
        super().__init__()
        self._data = nn.Parameter(torch.randn(n_channels, *resolution))

    def forward(self, u):
        u = torch.atleast_2d(u)
        return interpolate_grid_3d(self._data, u)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    m = CubicBSplineGrid3d(resolution=(6, 10, 10))
    m.to(device)
    out = m(torch.rand(50, 3, device=device))
    print(out.shape)
