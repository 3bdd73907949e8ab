# source: https://github.com/pytorch/audio/pull/242
# fixed twin: the default window is created on the STFT matrix's device, as PR 242 does.
import torch


def istft(stft_matrix, n_fft, hop_length=None, win_length=None, window=None, center=True, length=None):
    # stft_matrix: (channel, fft_size, n_frames) complex
    if win_length is None:
        win_length = n_fft
    if hop_length is None:
        hop_length = win_length // 4
    if window is None:
        window = torch.ones(win_length, device=stft_matrix.device)
    assert win_length <= n_fft
    left = (n_fft - win_length) // 2
    window = torch.nn.functional.pad(window, (left, n_fft - win_length - left))

    channels, _, n_frames = stft_matrix.shape
    frames = torch.fft.irfft(stft_matrix.transpose(1, 2), n=n_fft)  # (channel, n_frames, n_fft)
    frames = frames * window.view(1, 1, -1)

    expected_len = n_fft + hop_length * (n_frames - 1)
    y = frames.new_zeros(channels, expected_len)
    envelope = frames.new_zeros(expected_len)
    for i in range(n_frames):
        start = i * hop_length
        y[:, start:start + n_fft] += frames[:, i]
        envelope[start:start + n_fft] += window.pow(2)
    if center:
        y = y[:, n_fft // 2:-(n_fft // 2)]
        envelope = envelope[n_fft // 2:-(n_fft // 2)]
    if length is not None:
        y, envelope = y[:, :length], envelope[:length]
    return y / envelope.clamp(min=1e-11)


def round_trip(waveform, n_fft=64):
    spec = torch.stft(waveform, n_fft, hop_length=16, window=torch.ones(n_fft, device=waveform.device),
                      return_complex=True)
    return istft(spec, n_fft, hop_length=16, length=waveform.shape[-1])


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    wave = torch.randn(2, 400, device=device)
    print((round_trip(wave) - wave).abs().max().item())
