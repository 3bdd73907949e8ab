# source: https://github.com/Ending2015a/hash-grid-encoding/issues/3
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument max in method wrapper_CUDA_clamp_Tensor), at x1 = (x0 + 1).clamp(max=shape[1]-1)
# bug: the example's image sampler (a module whose image buffer is on the GPU) is run through
#      torch.jit.trace by the dataset; in the traced graph the bounds taken from self.data.shape
#      are recorded as size() results, 0-dim CPU tensors, so clamp(max=shape[1]-1) receives a
#      CPU tensor bound for a GPU tensor. A commenter names the cause and the fix (issue open):
#      make the bound a Python int (or a tensor on x0's device) in the two neighbour clamps. The
#      two lines are marked; no rule covers a traced shape turning into a CPU tensor, DL201 (the
#      CPU bound meets the GPU indices) is the closest.
import torch
import torch.nn as nn
from torch.utils.data import Dataset


class Sampler2D(nn.Module):
    def __init__(self, image):
        super().__init__()
        self.register_buffer("data", image.to(dtype=torch.float16), persistent=False)
        h, w, _ = image.shape
        self.register_buffer("resolution", torch.tensor((w, h), dtype=torch.float32), persistent=True)

    def forward(self, x):
        shape = self.data.shape
        x = x * self.resolution
        ind = x.long()
        w = x - ind.float()
        x0 = ind[:, 0].clamp(min=0, max=shape[1] - 1)
        y0 = ind[:, 1].clamp(min=0, max=shape[0] - 1)
        x1 = (x0 + 1).clamp(max=shape[1] - 1)  # expect: DL201
        y1 = (y0 + 1).clamp(max=shape[0] - 1)  # expect: DL201
        return (
            self.data[y0, x0].float() * (1.0 - w[:, 0:1]) * (1.0 - w[:, 1:2])
            + self.data[y0, x1].float() * w[:, 0:1] * (1.0 - w[:, 1:2])
            + self.data[y1, x0].float() * (1.0 - w[:, 0:1]) * w[:, 1:2]
            + self.data[y1, x1].float() * w[:, 0:1] * w[:, 1:2]
        )


class TaskDataset(Dataset):
    def __init__(self, sampler, batch_size, n_samples):
        self.sampler = sampler
        self.batch_size = batch_size
        self.n_samples = n_samples
        self.jit_sampler = None

    def setup(self):
        self.jit_sampler = torch.jit.trace(self.sampler, self.get_rand())

    def __len__(self):
        return self.n_samples

    def get_rand(self):
        return torch.rand([self.batch_size, 2], dtype=torch.float32, device=self.sampler.data.device)

    def __getitem__(self, index):
        if self.jit_sampler is None:
            self.setup()
        x = self.get_rand()
        return x, self.jit_sampler(x)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    sampler = Sampler2D(torch.rand(24, 32, 3)).to(device)
    dataset = TaskDataset(sampler, batch_size=16, n_samples=4)
    x, rgb = dataset[0]
    print(x.shape, rgb.shape)
