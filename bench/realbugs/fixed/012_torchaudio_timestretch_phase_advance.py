# source: https://github.com/pytorch/audio/pull/457
# error: RuntimeError: expected device cuda:0 but got device cpu
# bug: TimeStretch keeps its phase-advance table as a plain tensor attribute, so
#      TimeStretch().cuda() leaves it on the CPU and the phase vocoder mixes it with CUDA
#      spectrograms.
import math

import torch
import torch.nn as nn
import torchaudio.functional as F


class TimeStretch(nn.Module):
    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        super(TimeStretch, self).__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.register_buffer("phase_advance", torch.linspace(0, math.pi * hop_length, n_freq)[..., None])

    def forward(self, complex_specgrams, overriding_rate=None):
        rate = self.fixed_rate if overriding_rate is None else overriding_rate
        if rate == 1.0:
            return complex_specgrams
        return F.phase_vocoder(complex_specgrams, rate, self.phase_advance)


m = TimeStretch().cuda()
out = m(torch.randn(1, 2, 201, 400, 2).cuda(), 1.3)
