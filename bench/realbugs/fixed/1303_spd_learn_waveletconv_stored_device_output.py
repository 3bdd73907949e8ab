# source: https://github.com/spdlearn/spd_learn/pull/16
# fixed twin: forward returns the wavelet features on the input's device (X.device), as the PR does.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_gabor_wavelet(tt, foi, fwhm, sfreq, dtype=torch.complex64):
    freqs = 2.0 ** foi
    widths = 2.0 ** fwhm
    carrier = torch.exp(2j * math.pi * freqs[:, None] * tt[None, :])
    envelope = torch.exp(-4 * math.log(2) * tt[None, :] ** 2 / widths[:, None] ** 2)
    return (carrier * envelope).to(dtype) / sfreq


class WaveletConv(nn.Module):
    def __init__(self, kernel_width_s, foi_init, sfreq=100, dtype=torch.complex64, device=None):
        super().__init__()
        self.sfreq = sfreq
        self.dtype = dtype
        self.device = device if device is not None else torch.device("cpu")
        half = kernel_width_s / 2.0
        self.register_buffer("tt", torch.linspace(-half, half, int(kernel_width_s * sfreq)))
        foi = torch.tensor(foi_init)
        self.foi = nn.Parameter(foi)
        self.fwhm = nn.Parameter(-foi.clone())

    def forward(self, X):
        wavelets = compute_gabor_wavelet(self.tt, self.foi, self.fwhm, self.sfreq, dtype=self.dtype)
        n_freqs = wavelets.shape[0]
        batch_size, in_channels, times = X.shape
        X_conv = F.conv1d(X.to(self.dtype).view(-1, 1, times), wavelets.unsqueeze(1))
        X_conv = X_conv.view(batch_size, in_channels, n_freqs, -1).swapaxes(1, 2)
        return X_conv.to(device=X.device, dtype=self.dtype)


class WaveletCovNet(nn.Module):
    def __init__(self, n_chans=4, foi_init=(2.0, 3.0, 4.0), sfreq=100, n_classes=2):
        super().__init__()
        self.wavelet = WaveletConv(kernel_width_s=0.5, foi_init=list(foi_init), sfreq=sfreq)
        self.head = nn.Linear(len(foi_init) * n_chans * n_chans, n_classes)

    def forward(self, x):
        feats = self.wavelet(x).abs()
        feats = feats - feats.mean(dim=-1, keepdim=True)
        cov = feats @ feats.transpose(-1, -2) / feats.shape[-1]
        return self.head(cov.flatten(1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = WaveletCovNet().to(device)
    x = torch.randn(3, 4, 200, device=device)
    print(model(x).shape)
