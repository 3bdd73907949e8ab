# source: https://github.com/2noise/ChatTTS/issues/741
# error: RuntimeError: stft input and window must be on the same device but got self on cpu and window on cuda:0
# bug: Chat.load puts the DVAE (and with it the mel front end, whose STFT window is a registered
#      buffer) on the GPU; sample_audio_speaker hands the DVAE a waveform loaded from a file, a host
#      array turned into a CPU tensor, and the mel preprocessor runs the STFT on it with the CUDA
#      window. The reporter's workaround was a hard-coded audio.to('cuda') (which then broke the CPU
#      fallback); the upstream fix gives MelSpectrogramFeatures the device and moves the audio there
#      first thing in forward. Since the fix inserts that move, the line it precedes is marked
#      (DL203: a model moved to a device called on inputs that never were).
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
    def __init__(self, n_fft=64, hop_length=16, n_mels=8):
        super().__init__()
        self.mel_spec = MelSpectrogram(n_fft, hop_length, n_mels)

    def forward(self, audio):
        mel = self.mel_spec(audio)  # expect: DL203
        return torch.log(torch.clip(mel, min=1e-5))


class DVAE(nn.Module):
    def __init__(self, n_mels=8, dim=16, codebook=32):
        super().__init__()
        self.preprocessor_mel = MelSpectrogramFeatures(n_mels=n_mels)
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
        self.dvae = DVAE()
        self.speaker = Speaker()

    def load(self):
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.dvae.load_pretrained(device)

    def sample_audio_speaker(self, wav):
        return self.speaker.encode_prompt(self.dvae.sample_audio(wav))


def load_audio(path, sr):
    generator = torch.Generator().manual_seed(len(path))
    return torch.rand(sr // 10, generator=generator).tolist()


if __name__ == "__main__":
    chat = Chat()
    chat.load()
    print(chat.sample_audio_speaker(load_audio("zm.mp3", 24000)))
