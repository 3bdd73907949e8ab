# source: https://github.com/bernardo-torres/spectral-optimal-transport/issues/3
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (the issue describes this mismatch after loss.to('cuda') with GPU inputs)
# bug: the spectral optimal-transport loss and its STFT transform take a device argument (default
#      "cpu"), store it, build the analysis window as a plain tensor attribute on it, and in forward
#      move every input to that stored device. After loss.to("cuda") with GPU inputs, forward copies
#      the inputs back to the CPU while the registered bin positions moved to the GPU, and the
#      transport step mixes them. The fix (commit 42eac34) registers the window as a buffer, drops the
#      moves to self.device and takes the device from the input; the changed lines are marked
#      (DL103 for the window, DL206 for the moves to the stored device).
import math

import torch
import torch.nn as nn


class _BaseTransform(nn.Module):
    def __init__(self, device="cpu"):
        super().__init__()
        self.device = device


class STFT(_BaseTransform):
    def __init__(self, fft_size=256, hop_length=64, device="cpu"):
        super().__init__(device)
        self.fft_size = fft_size
        self.hop_size = hop_length
        hann = [0.5 - 0.5 * math.cos(2 * math.pi * n / fft_size) for n in range(fft_size)]
        self.window = torch.tensor(hann, dtype=torch.float32).to(device)  # expect: DL103

    def get_bin_positions(self):
        return torch.linspace(0, 1, self.fft_size // 2 + 1)

    def forward(self, x):
        x = x.to(self.device)  # expect: DL206
        spec = torch.stft(x, n_fft=self.fft_size, hop_length=self.hop_size, window=self.window, return_complex=True)
        return torch.abs(spec)


def wasserstein_1d(u_values, v_values, positions, eps=1e-8):
    u = u_values / (u_values.sum(dim=-1, keepdim=True) + eps)
    v = v_values / (v_values.sum(dim=-1, keepdim=True) + eps)
    cdf_gap = torch.cumsum(u - v, dim=-1).abs()
    widths = torch.diff(positions, append=positions[-1:] + (positions[-1:] - positions[-2:-1]))
    return (cdf_gap * widths).sum(dim=-1)


class SOTLoss(nn.Module):
    def __init__(self, fft_size=256, hop_length=64, device="cpu", reduce=True):
        super().__init__()
        self.transform_module = STFT(fft_size=fft_size, hop_length=hop_length, device=device)
        self.device = device
        self.register_buffer("bin_positions", self.transform_module.get_bin_positions())
        self.reduce = reduce
        self.to(device)

    def forward(self, x, y):
        x = x.to(self.device)  # expect: DL206
        y = y.to(self.device)  # expect: DL206
        if x.ndim == 1:
            x, y = x.unsqueeze(0), y.unsqueeze(0)
        x_spec = self.transform_module(x).permute(0, 2, 1)
        y_spec = self.transform_module(y).permute(0, 2, 1)
        loss = wasserstein_1d(x_spec, y_spec, self.bin_positions).mean(dim=-1)
        return loss.mean() if self.reduce else loss


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    loss_fn = SOTLoss()
    loss_fn.to(device)
    x = torch.randn(2, 2048, device=device)
    y = torch.randn(2, 2048, device=device)
    print(loss_fn(x, y))
