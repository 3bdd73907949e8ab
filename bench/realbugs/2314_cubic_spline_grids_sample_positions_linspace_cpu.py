# source: https://github.com/teamtomo/torch-cubic-spline-grids/pull/15
# error: RuntimeError from torch.searchsorted: the boundaries (host) and the input values (GPU query points) must be on the same device
# bug: to interpolate, the spline grid finds the four control points around each query point:
#      a helper builds the sample positions of the padded grid with torch.linspace (no device=,
#      on the host) and torch.searchsorted locates the GPU query points in them; for a grid of a
#      single sample the interpolation coordinate is built with torch.tensor([0.5]) on the host
#      too. With the grid and the query points on the GPU both meet host tensors. The merged fix
#      (commit 82e6f58) hands the query points' device to the helper (a new parameter, passed by
#      the caller) and makes both tensors there. The two factory lines are marked (DL202: factories
#      without device= meeting the query points); the lines that only pass the device on are not.
import torch
import torch.nn as nn


def generate_sample_positions_for_padded_grid_1d(n_samples):
    du = 1 / (n_samples - 1)
    sample_coordinates = torch.linspace(-du, 1 + du, steps=n_samples + 2)  # expect: DL202
    sample_coordinates[1] = 0.0
    sample_coordinates[-2] = 1.0
    return sample_coordinates


def find_control_point_idx_1d(sample_positions, query_points):
    iub_idx = torch.searchsorted(sample_positions.contiguous(), query_points.contiguous(), side="right")
    iub_idx = iub_idx.clamp(max=len(sample_positions) - 2)
    return torch.stack([iub_idx - 2, iub_idx - 1, iub_idx, iub_idx + 1], dim=-1)


def interpolants_to_interpolation_data_1d(interpolants, n_samples):
    interpolants = torch.clamp(interpolants, min=0, max=1)
    if n_samples > 1:
        grid_u = generate_sample_positions_for_padded_grid_1d(n_samples)
        control_point_idx = find_control_point_idx_1d(grid_u, query_points=interpolants)
        u_p1 = grid_u[control_point_idx[:, 1]]
        t = (interpolants - u_p1) * (n_samples - 1)
    else:
        control_point_idx = torch.tensor([0, 1, 2, 3]).expand(len(interpolants), 4)
        t = torch.tensor([0.5]).expand(len(interpolants))  # expect: DL202
    return control_point_idx, t


class CubicBSplineGrid1d(nn.Module):
    def __init__(self, resolution=8):
        super().__init__()
        self._data = nn.Parameter(torch.zeros(1, resolution))

    def forward(self, u):
        grid = torch.cat([self._data[:, :1], self._data, self._data[:, -1:]], dim=1)  # pad
        idx, t = interpolants_to_interpolation_data_1d(u, n_samples=self._data.shape[1])
        p = grid[:, idx]  # (c, b, 4)
        w = torch.stack([(1 - t) ** 3, 3 * t ** 3 - 6 * t ** 2 + 4, -3 * t ** 3 + 3 * t ** 2 + 3 * t + 1, t ** 3], -1) / 6
        return (p * w).sum(-1).t()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    grid = CubicBSplineGrid1d(resolution=10).to(device)
    opt = torch.optim.Adam(grid.parameters(), lr=0.1)
    x = torch.rand(128, device=device)
    y = torch.cos(4 * x).unsqueeze(-1)
    for _ in range(30):
        loss = (grid(x) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(round(loss.item(), 4))
