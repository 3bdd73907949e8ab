# source: https://github.com/csteinmetz1/auraloss/issues/34
# fixed twin: the mel filterbank is registered as a buffer (the fix the issue names), so .to(device) moves it with the loss.
import torch
import torch.nn as nn


def mel_filters(sample_rate, n_fft, n_mels):
    n_freqs = n_fft // 2 + 1
    centers = [int(i * (n_freqs - 1) / (n_mels + 1)) for i in range(n_mels + 2)]
    rows = []
    for m in range(1, n_mels + 1):
        lo, mid, hi = centers[m - 1], centers[m], centers[m + 1]
        row = [0.0] * n_freqs
        for k in range(lo, hi + 1):
            if k <= mid:
                row[k] = (k - lo) / max(mid - lo, 1)
            else:
                row[k] = (hi - k) / max(hi - mid, 1)
        rows.append(row)
    return rows


class STFTLoss(nn.Module):
    def __init__(self, fft_size=256, hop_size=64, win_length=256, scale=None, n_bins=None,
                 sample_rate=None, device=None):
        super().__init__()
        self.fft_size = fft_size
        self.hop_size = hop_size
        self.win_length = win_length
        self.register_buffer("window", torch.hann_window(win_length))
        self.scale = scale
        self.device = device
        if self.scale == "mel":
            assert sample_rate is not None
            fb = mel_filters(sample_rate, fft_size, n_mels=n_bins)
            self.register_buffer("fb", torch.tensor(fb).unsqueeze(0))
        if scale is not None and device is not None:
            self.fb = self.fb.to(self.device)

    def stft(self, x):
        spec = torch.stft(x.view(-1, x.size(-1)), self.fft_size, self.hop_size, self.win_length,
                          self.window, return_complex=True)
        return spec.abs().clamp(min=1e-8)

    def forward(self, x, y):
        x_mag = self.stft(x)
        y_mag = self.stft(y)
        if self.scale is not None:
            x_mag = torch.matmul(self.fb, x_mag)
            y_mag = torch.matmul(self.fb, y_mag)
        sc = torch.norm(y_mag - x_mag, p="fro") / torch.norm(y_mag, p="fro")
        log_mag = (torch.log(x_mag) - torch.log(y_mag)).abs().mean()
        return sc + log_mag


class MelSTFTLoss(STFTLoss):
    def __init__(self, sample_rate, fft_size=256, hop_size=64, win_length=256, n_mels=32, **kwargs):
        super().__init__(fft_size, hop_size, win_length, scale="mel", n_bins=n_mels,
                         sample_rate=sample_rate, **kwargs)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    criterion = MelSTFTLoss(sample_rate=16000).to(device)
    generator = nn.Conv1d(1, 1, 9, padding=4).to(device)
    target = torch.randn(2, 1, 4000, device=device)
    loss = criterion(generator(torch.randn(2, 1, 4000, device=device)), target)
    loss.backward()
    print(float(loss))
