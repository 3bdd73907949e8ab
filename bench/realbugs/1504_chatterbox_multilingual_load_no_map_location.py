# source: https://github.com/resemble-ai/chatterbox/pull/418
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the multilingual TTS loader reads the voice-encoder and vocoder state dicts with torch.load and
#      no map_location; the released checkpoints were saved from CUDA tensors, so on a CPU-only (or
#      MPS) machine torch.load fails before the modules are moved to the requested device. The
#      English loader already mapped to the CPU for non-CUDA devices. The PR (open) and the merged
#      fix (PR 410, commit c883726) add map_location to both calls; those lines are marked (DL301).
#      Here the checkpoints are written on the machine that runs the script, so the CPU run loads.
import os
import tempfile
from pathlib import Path

import torch
import torch.nn as nn


class VoiceEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.proj = nn.Linear(16, 8)

    def forward(self, mels):
        _, (h, _) = self.lstm(mels)
        return self.proj(h[-1])


class S3Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(8, 8, 3, padding=1), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Conditionals:
    def __init__(self, emb):
        self.emb = emb

    def to(self, device):
        self.emb = self.emb.to(device)
        return self

    @classmethod
    def load(cls, fpath, map_location="cpu"):
        return cls(torch.load(fpath, map_location=map_location, weights_only=True)["emb"])


class MultilingualTTS:
    def __init__(self, ve, s3gen, device, conds=None):
        self.ve, self.s3gen, self.device, self.conds = ve, s3gen, device, conds

    @classmethod
    def from_local(cls, ckpt_dir, device):
        ckpt_dir = Path(ckpt_dir)
        ve = VoiceEncoder()
        ve.load_state_dict(
            torch.load(ckpt_dir / "ve.pt", weights_only=True)  # expect: DL301
        )
        ve.to(device).eval()

        s3gen = S3Gen()
        s3gen.load_state_dict(
            torch.load(ckpt_dir / "s3gen.pt", weights_only=True)  # expect: DL301
        )
        s3gen.to(device).eval()

        conds = None
        if (builtin_voice := ckpt_dir / "conds.pt").exists():
            conds = Conditionals.load(builtin_voice).to(device)
        return cls(ve, s3gen, device, conds=conds)

    @torch.no_grad()
    def generate(self, mels):
        spk = self.ve(mels.to(self.device))
        return self.s3gen(spk.unsqueeze(-1) + self.conds.emb.unsqueeze(-1))


def write_release(ckpt_dir):
    torch.save(VoiceEncoder().state_dict(), os.path.join(ckpt_dir, "ve.pt"))
    torch.save(S3Gen().state_dict(), os.path.join(ckpt_dir, "s3gen.pt"))
    torch.save({"emb": torch.randn(1, 8)}, os.path.join(ckpt_dir, "conds.pt"))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    ckpt_dir = tempfile.mkdtemp()
    write_release(ckpt_dir)
    tts = MultilingualTTS.from_local(ckpt_dir, device)
    print(tts.generate(torch.randn(1, 5, 8)).shape)
