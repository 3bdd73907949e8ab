# source: https://github.com/pytorch/pytorch/issues/43815
# error: (issue) after m.cuda(), m.data['a'] is still on the CPU while the registered buffer m.data_a is on cuda:0; reading the tensors through the dict mixes devices
# bug: a module keeps its constant tensors in a plain dict and also registers each one as a buffer;
#      Module.cuda()/to() replaces the buffers with moved copies but the dict still holds the
#      original CPU tensors, which forward reads. PyTorch keeps this behaviour (buffers are moved
#      by copy), so there is no upstream fix: the dict of tensors is the line marked (DL103,
#      tensors a module holds outside its registered buffers).
import torch
import torch.nn as nn


class Normalizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = {  # expect: DL103
            "mean": torch.Tensor([0.5, 0.4, 0.3]),
            "std": torch.Tensor([0.2, 0.2, 0.25]),
        }
        for name in self.data:
            self.register_buffer("data_" + name, self.data[name])
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        x = (x - self.data["mean"].view(1, -1, 1, 1)) / self.data["std"].view(1, -1, 1, 1)
        return self.conv(x)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    m = Normalizer().to(device)
    print("m.data['mean'] is m.data_mean:", m.data["mean"] is m.data_mean)
    print(m.data["mean"].device, m.data_mean.device)
    print(m(torch.randn(2, 3, 8, 8, device=device)).shape)
