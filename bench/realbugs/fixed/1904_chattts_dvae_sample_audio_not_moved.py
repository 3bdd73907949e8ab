# source: https://github.com/2noise/ChatTTS/issues/741
# fixed twin: MelSpectrogramFeatures takes the DVAE's device and moves the audio there before the mel transform, as the upstream dvae.py does.
import torch
import torch.nn as nn


class MelSpectrogram(nn.Module):
    def __init__(self, n_fft=64, hop_length=16, n_mels=8):
        super().__init__()
        self.n_fft, self.hop_length = n_fft, hop_length
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("fb", torch.rand(n_fft // 2 + 1, n_mels))

    def forward(self, waveform):
        spec = torch.stft(waveform, self.n_fft, self.hop_length, window=self.window,
                          return_complex=True).abs()
        return torch.matmul(spec.transpose(-1, -2), self.fb).transpose(-1, -2)


class MelSpectrogramFeatures(nn.Module):
    def __init__(self, n_fft=64, hop_length=16, n_mels=8, device=torch.device("cpu")):
        super().__init__()
        self.device = device
        self.mel_spec = MelSpectrogram(n_fft, hop_length, n_mels)

    def forward(self, audio):
        audio = audio.to(self.device)
        mel = self.mel_spec(audio)
        return torch.log(torch.clip(mel, min=1e-5))


class DVAE(nn.Module):
    def __init__(self, n_mels=8, dim=16, codebook=32, device=torch.device("cpu")):
        super().__init__()
        self.preprocessor_mel = MelSpectrogramFeatures(n_mels=n_mels, device=device)
        self.downsample_conv = nn.Conv1d(n_mels, dim, 3, padding=1)
        self.codes = nn.Embedding(codebook, dim)

    def load_pretrained(self, device):
        self.to(device)

    @torch.inference_mode()
    def forward(self, inp, mode="decode"):
        if mode == "encode":
            mel = self.preprocessor_mel(inp)
            x = self.downsample_conv(mel.unsqueeze(0)).transpose(1, 2)
            return torch.cdist(x, self.codes.weight.unsqueeze(0)).argmin(-1)
        return self.codes(inp)

    @torch.inference_mode()
    def sample_audio(self, wav):
        if not isinstance(wav, torch.Tensor):
            wav = torch.tensor(wav)
        return self(wav, "encode").squeeze_(0)


class Speaker:
    def encode_prompt(self, codes):
        return ",".join(str(int(c)) for c in codes.flatten().tolist()[:8])


class Chat:
    def __init__(self):
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.dvae = DVAE(device=self.device)
        self.speaker = Speaker()

    def load(self):
        self.dvae.load_pretrained(self.device)

    def sample_audio_speaker(self, wav):
        return self.speaker.encode_prompt(self.dvae.sample_audio(wav))


def load_audio(path, sr):
    generator = torch.Generator().manual_seed(len(path))
    return torch.rand(sr // 10, generator=generator).tolist()


if __name__ == "__main__":
    chat = Chat()
    chat.load()
    print(chat.sample_audio_speaker(load_audio("zm.mp3", 24000)))
