# source: https://github.com/pytorch/audio/pull/242
# error: RuntimeError: expected device cuda:0 but got device cpu (torchaudio.functional.istft on a CUDA STFT matrix without a window, issue 240)
# bug: torchaudio's istft, when the caller gives no window, builds a rectangular one with
#      torch.ones(win_length) - on the CPU whatever the device of the STFT matrix - and multiplies
#      the inverse-FFT frames (on the matrix's device) by it, and later divides by a window envelope
#      built from it. The fix (PR 242) creates the default window on stft_matrix.device; the
#      factory line is marked (DL202: a tensor made without device= that meets a tensor argument).
import torch


def istft(stft_matrix, n_fft, hop_length=None, win_length=None, window=None, center=True, length=None):
    # stft_matrix: (channel, fft_size, n_frames) complex
    if win_length is None:
        win_length = n_fft
    if hop_length is None:
        hop_length = win_length // 4
    if window is None:
        window = torch.ones(win_length)  # expect: DL202
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
