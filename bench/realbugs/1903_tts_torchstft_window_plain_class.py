# source: https://github.com/mozilla/TTS/issues/619
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the vocoder losses compute spectrograms with a small TorchSTFT helper that is a plain Python
#      class holding its analysis window as a tensor attribute; the STFT losses (nn.Modules) keep a
#      TorchSTFT each, and the GAN training script moves the generator criterion with
#      criterion_gen.cuda(), which reaches only registered parameters and buffers - the window stays
#      on the CPU and torch.stft meets it with the CUDA waveforms. The fix (PR 620, by the reporter)
#      makes TorchSTFT an nn.Module and registers the window as a parameter without gradient; the
#      window line is marked (DL103, the closest rule: a plain tensor attribute that a module move
#      does not reach - here one level down, in a non-module helper the loss module holds).
import torch
import torch.nn as nn
import torch.nn.functional as F


class TorchSTFT():
    def __init__(self, n_fft, hop_length, win_length, window="hann_window"):
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.win_length = win_length
        self.window = getattr(torch, window)(win_length)  # expect: DL103

    def __call__(self, x):
        o = torch.stft(x, self.n_fft, self.hop_length, self.win_length, self.window,
                       center=True, pad_mode="reflect", normalized=False, onesided=True,
                       return_complex=True)
        return torch.clamp(o.abs() ** 2, min=1e-8).sqrt()


class STFTLoss(nn.Module):
    def __init__(self, n_fft, hop_length, win_length):
        super().__init__()
        self.stft = TorchSTFT(n_fft, hop_length, win_length)

    def forward(self, y_hat, y):
        y_hat_M = self.stft(y_hat)
        y_M = self.stft(y)
        loss_mag = F.l1_loss(torch.log(y_M), torch.log(y_hat_M))
        loss_sc = torch.norm(y_M - y_hat_M, p="fro") / torch.norm(y_M, p="fro")
        return loss_mag, loss_sc


class MultiScaleSTFTLoss(nn.Module):
    def __init__(self, n_ffts=(64, 128), hop_lengths=(16, 32), win_lengths=(48, 96)):
        super().__init__()
        self.loss_funcs = nn.ModuleList(
            STFTLoss(n, h, w) for n, h, w in zip(n_ffts, hop_lengths, win_lengths)
        )

    def forward(self, y_hat, y):
        total_mag, total_sc = 0, 0
        for f in self.loss_funcs:
            lm, lsc = f(y_hat, y)
            total_mag += lm
            total_sc += lsc
        n = len(self.loss_funcs)
        return total_mag / n, total_sc / n


class GeneratorLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.stft_loss = MultiScaleSTFTLoss()

    def forward(self, y_hat, y):
        mag, sc = self.stft_loss(y_hat.squeeze(1), y.squeeze(1))
        return mag + sc


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv1d(1, 1, 9, padding=4)

    def forward(self, x):
        return torch.tanh(self.net(x))


def main(use_cuda):
    model_gen = Generator()
    criterion_gen = GeneratorLoss()
    if use_cuda:
        model_gen.cuda()
        criterion_gen.cuda()
    optimizer = torch.optim.Adam(model_gen.parameters(), lr=1e-4)
    for _ in range(2):
        noise = torch.randn(2, 1, 512)
        target = torch.randn(2, 1, 512)
        if use_cuda:
            noise, target = noise.cuda(), target.cuda()
        loss = criterion_gen(model_gen(noise), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())


if __name__ == "__main__":
    main(torch.cuda.is_available())
