# source: https://github.com/danpovey/filtering/pull/1
# fixed twin: commit 2885685 (merged in PR #1, "fix minor type problem") passes the filters with .type_as() of the
#             signal: conv1d(signal, (self.filter_forward).type_as(signal), ...) in split and
#             conv_transpose1d(..., (self.filter_backward).type_as(reshaped_split_signal), ...) in merge.
import cmath
import math

import numpy as np
import torch


# --- lilfilter/filter_function.py ---
class filter_function:
    f = {6: None, 10: None}

    @staticmethod
    def get_function_at(S, t):
        if abs(t) >= S:
            return 0.0
        window = 0.5 + 0.5 * math.cos(math.pi * t / S)
        return window * (1.0 if t == 0 else math.sin(math.pi * t) / (math.pi * t))


# --- lilfilter/multistreamer.py ---
class Multistreamer:
    def __init__(self, N=8, S=10, double_precision=False, full_padding=True):
        assert isinstance(N, int) and N >= 1 and isinstance(double_precision, bool)
        assert isinstance(full_padding, bool)
        self.N = N
        self.double_precision = double_precision
        self.full_padding = full_padding
        if not S in filter_function.f.keys():
            raise ValueError("S = {} is not one of the allowed values {}".format(S, filter_function.f.keys()))
        filter_size = (S * N) * 2 - 1
        self.filter_offset = (S * N) - 1
        if full_padding:
            self.padding = 2 * S * N
        else:
            self.padding = S * N

        complex_dtype = (np.complex128 if double_precision else np.complex64)
        canonical_filter = np.empty((filter_size), dtype=complex_dtype)
        for i in range(filter_size):
            t_int = i - (S * N - 1)
            t = t_int / N
            canonical_filter[i] = filter_function.get_function_at(S, t) / N

        self.filter_matrix = np.empty((N, filter_size), dtype=complex_dtype)
        for b in range(N):
            band_center = (b + 0.5) * math.pi / N
            for i in range(filter_size):
                t = i - (S * N - 1)
                f = canonical_filter[i]
                self.filter_matrix[b, i] = f * cmath.exp(-1.0j * band_center * t)

        dtype_real = torch.float64 if double_precision else torch.float32
        self.filter_forward = torch.empty((2 * N, 1, filter_size), dtype=dtype_real)
        self.filter_forward[0:N, 0, :] = torch.tensor(self.filter_matrix.real)
        self.filter_forward[N:2 * N, 0, :] = torch.tensor(self.filter_matrix.imag)
        self.filter_backward = 2.0 * N * self.filter_forward

    def split(self, signal):
        if len(signal.shape) != 2:
            raise ValueError("Signal expected to have two axes (minibatch_size, signal_length); got {}".format(signal.shape))
        dtype_real = torch.float64 if self.double_precision else torch.float32
        if signal.dtype != dtype_real:
            raise ValueError("Expected input signal to have dtype == {}, found {}".format(dtype_real, signal.dtype))
        signal = signal.unsqueeze(1)
        conv_output = torch.nn.functional.conv1d(signal, (self.filter_forward).type_as(signal),
                                                 stride=self.N,
                                                 padding=self.padding)
        minibatch_size = conv_output.shape[0]
        reduced_signal_length = conv_output.shape[2]
        return conv_output.view(minibatch_size, 2, self.N, reduced_signal_length)

    def merge(self, split_signal):
        if len(split_signal.shape) != 4 or split_signal.shape[1] != 2 or split_signal.shape[2] != self.N:
            raise ValueError("Expected input to have 4 axes, of the form (x, 2, {}, y), got {}".format(
                self.N, split_signal.shape))
        dtype_real = torch.float64 if self.double_precision else torch.float32
        if split_signal.dtype != dtype_real:
            raise ValueError("Expected input to have dtype {}, got instead {}".format(split_signal.dtype, dtype_real))
        (minibatch_size, _, _, reduced_signal_length) = split_signal.shape
        reshaped_split_signal = split_signal.contiguous().view(minibatch_size, 2 * self.N, reduced_signal_length)
        signal = torch.nn.functional.conv_transpose1d(
            reshaped_split_signal,
            (self.filter_backward).type_as(reshaped_split_signal),
            stride=self.N,
            padding=self.padding)
        return signal.squeeze(1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    m = Multistreamer(N=4, S=6)
    signal = torch.randn(3, 400, device=device)
    split = m.split(signal)
    merged = m.merge(split)
    print(split.shape, merged.shape)
