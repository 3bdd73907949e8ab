# source: https://github.com/pytorch/pytorch/issues/31574
# fixed twin: the STFT window and the mel filterbank are registered as buffers, as pytorch/audio PR 369 does.
import math

import torch
import torch.nn as nn


def create_fb_matrix(n_freqs, f_min, f_max, n_mels, sample_rate):
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = 2595.0 * math.log10(1.0 + f_min / 700.0)
    m_max = 2595.0 * math.log10(1.0 + f_max / 700.0)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return torch.clamp(torch.min(down, up), min=0.0)


class Spectrogram(nn.Module):
    def __init__(self, n_fft=400, hop_length=None, power=2.0, window_fn=torch.hann_window):
        super().__init__()
        self.n_fft = n_fft
        self.hop_length = hop_length if hop_length is not None else n_fft // 2
        self.power = power
        self.register_buffer("window", window_fn(n_fft))

    def forward(self, waveform):
        spec = torch.stft(waveform, self.n_fft, self.hop_length, window=self.window, return_complex=True)
        return spec.abs().pow(self.power)


class MelScale(nn.Module):
    def __init__(self, n_mels=32, sample_rate=16000, f_min=0.0, f_max=None, n_stft=201):
        super().__init__()
        f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.register_buffer("fb", create_fb_matrix(n_stft, f_min, f_max, n_mels, sample_rate))

    def forward(self, specgram):
        return torch.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class MelSpectrogram(nn.Module):
    def __init__(self, sample_rate=16000, n_fft=400, n_mels=32):
        super().__init__()
        self.spectrogram = Spectrogram(n_fft=n_fft)
        self.mel_scale = MelScale(n_mels=n_mels, sample_rate=sample_rate, n_stft=n_fft // 2 + 1)

    def forward(self, waveform):
        specgram = self.spectrogram(waveform)
        return self.mel_scale(specgram)


def _test_script_module(transform_cls, tensor, device):
    py_method = transform_cls().to(device)
    torch_method = torch.jit.script(transform_cls()).to(device)
    tensor = tensor.to(device)
    return torch.allclose(py_method(tensor), torch_method(tensor), atol=1e-4)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(_test_script_module(MelSpectrogram, torch.rand(1, 1600), device))
