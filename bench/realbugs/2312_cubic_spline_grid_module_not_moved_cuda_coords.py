# source: https://github.com/teamtomo/torch-cubic-spline-grids/issues/26
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: a user builds a 3D spline grid module (its control points are a parameter made on the
#      host) and calls it on query coordinates drawn on the GPU, without moving the module; the
#      interpolation derives the control-point indices from the coordinates (on the GPU) and
#      indexes the host grid with them. The maintainer's answer, confirmed by the user: move the
#      module with .to(device) before calling it. The fix only inserts that move; the call it
#      precedes is marked (DL201, the closest rule: GPU inputs meeting an unmoved module's
#      parameters; the failing op is an index, DL207's territory).
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
    out = m(torch.rand(50, 3, device=device))  # expect: DL201
    print(out.shape)
