# source: https://github.com/PTB-MR/mrpro/issues/823
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (GridSamplingOp.from_displacement with displacement fields on the GPU)
# bug: the grid-sampling operator's constructor from displacement fields builds the identity
#      sampling grid with torch.meshgrid of torch.linspace (on the CPU) and adds the scaled
#      displacements to it; with displacements on the GPU the addition mixes devices. The fix
#      (commit 966707c, PR 824) casts each identity grid to its displacement (device and dtype)
#      before adding; the changed lines of the 2D branch are marked (DL201: the host grid meets a
#      tensor argument; the 3D branch, left out here, got the same change).
import torch
import torch.nn.functional as F


class GridSamplingOp(torch.nn.Module):
    def __init__(self, grid_z, grid_y, grid_x, interpolation_mode="bilinear", padding_mode="zeros"):
        super().__init__()
        self.grid_y, self.grid_x = grid_y, grid_x
        self.interpolation_mode, self.padding_mode = interpolation_mode, padding_mode

    @classmethod
    def from_displacement(cls, displacement_y, displacement_x, interpolation_mode="bilinear", padding_mode="zeros"):
        if displacement_x.ndim < 3 or displacement_y.ndim < 3:
            raise ValueError("For a 2D displacement, displacement should have at least 3 dimensions: batch y x.")
        *_, n_y, n_x = torch.broadcast_shapes(displacement_y.shape, displacement_x.shape)
        grid_y, grid_x = torch.meshgrid(torch.linspace(-1, 1, n_y), torch.linspace(-1, 1, n_x), indexing="ij")
        grid_y = grid_y + displacement_y * 2 / (n_y - 1)  # expect: DL201
        grid_x = grid_x + displacement_x * 2 / (n_x - 1)  # expect: DL201
        return cls(None, grid_y, grid_x, interpolation_mode, padding_mode)

    def forward(self, image):
        grid = torch.stack((self.grid_x, self.grid_y), dim=-1)
        return F.grid_sample(image, grid, mode=self.interpolation_mode, padding_mode=self.padding_mode,
                             align_corners=True)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    image = torch.rand(2, 1, 24, 20, device=device)
    displacement_y = 0.5 * torch.randn(2, 24, 20).to(device)
    displacement_x = 0.5 * torch.randn(2, 24, 20).to(device)
    operator = GridSamplingOp.from_displacement(displacement_y, displacement_x)
    print(operator(image).shape)
