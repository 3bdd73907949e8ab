# source: https://github.com/teamtomo/torch-cubic-spline-grids/pull/15
# fixed twin: the sample positions and the single-sample interpolation coordinate are made on the query points' device, which the caller hands to the helper, as the merged fix (82e6f58) does.
import torch
import torch.nn as nn


def generate_sample_positions_for_padded_grid_1d(n_samples, device):
    du = 1 / (n_samples - 1)
    sample_coordinates = torch.linspace(-du, 1 + du, steps=n_samples + 2, device=device)
    sample_coordinates[1] = 0.0
    sample_coordinates[-2] = 1.0
    return sample_coordinates


def find_control_point_idx_1d(sample_positions, query_points):
    iub_idx = torch.searchsorted(sample_positions.contiguous(), query_points.contiguous(), side="right")
    iub_idx = iub_idx.clamp(max=len(sample_positions) - 2)
    return torch.stack([iub_idx - 2, iub_idx - 1, iub_idx, iub_idx + 1], dim=-1)


def interpolants_to_interpolation_data_1d(interpolants, n_samples):
    interpolants = torch.clamp(interpolants, min=0, max=1)
    device = interpolants.device
    if n_samples > 1:
        grid_u = generate_sample_positions_for_padded_grid_1d(n_samples, device=device)
        control_point_idx = find_control_point_idx_1d(grid_u, query_points=interpolants)
        u_p1 = grid_u[control_point_idx[:, 1]]
        t = (interpolants - u_p1) * (n_samples - 1)
    else:
        control_point_idx = torch.tensor([0, 1, 2, 3]).expand(len(interpolants), 4)
        t = torch.tensor([0.5], device=device).expand(len(interpolants))
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
