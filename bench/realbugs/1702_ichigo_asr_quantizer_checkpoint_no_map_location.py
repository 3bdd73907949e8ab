# source: https://github.com/janhq/ichigo/pull/219
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the speech recogniser builds its three stages and only then picks "cuda if available else
#      cpu" and moves them there. The quantizer stage is restored by a helper that downloads the
#      published checkpoint (saved straight from CUDA tensors) and hands it to torch.load without
#      map_location, so on a CPU-only machine (the reporter's laptop) the constructor fails. The fix
#      (PR 219, commit 02e2f79) loads the checkpoint onto the CPU (the stages are moved to the
#      chosen device afterwards); that torch.load is marked (DL301).
import os
import tempfile

import torch
import torch.nn as nn


def fetch_from_hub(repo_id, filename):
    # stand-in for the hub download: the file is already in the local cache
    return os.path.join(tempfile.gettempdir(), repo_id.replace("/", "--"), filename)


class Quantizer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config["dim"], config["codebook_dim"])
        self.codebook = nn.Embedding(config["codebook_size"], config["codebook_dim"])

    def forward(self, embs, return_stoks=False):
        z = self.proj(embs)
        dist = torch.cdist(z, self.codebook.weight.unsqueeze(0).expand(z.size(0), -1, -1))
        stoks = dist.argmin(-1)
        return stoks if return_stoks else self.codebook(stoks)

    def dequantize(self, stoks):
        return self.codebook(stoks)


def load_quantizer(ref, config):
    if ":" in ref:
        repo_id, filename = ref.split(":", 1)
        local_filename = fetch_from_hub(repo_id, filename)
    else:
        local_filename = ref

    spec = torch.load(local_filename)  # expect: DL301
    state_dict = {k.replace("model.", ""): v for k, v in spec["state_dict"].items()}
    quantizer = Quantizer(config)
    quantizer.load_state_dict(state_dict, strict=False)
    quantizer.eval()
    return quantizer


class SpeechRecognizer:
    def __init__(self, config):
        self.config = config
        self.encoder = nn.Sequential(nn.Conv1d(1, config["dim"], 5, stride=4), nn.GELU())
        self.quantizer = load_quantizer(ref="{}:{}".format(config["hub"], config["name"]), config=config)
        self.decoder = nn.Linear(config["codebook_dim"], config["vocab"])

        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.encoder.to(self.device)
        self.quantizer.to(self.device)
        self.decoder.to(self.device)

    def transcribe(self, wav):
        wav = wav.to(self.device)
        embs = self.encoder(wav.unsqueeze(1)).transpose(1, 2)
        stoks = self.quantizer(embs, return_stoks=True)
        return self.decoder(self.quantizer.dequantize(stoks)).argmax(-1)


def main():
    config = {"dim": 8, "codebook_dim": 4, "codebook_size": 16, "vocab": 10,
              "hub": "demo/asr-1702", "name": "quantizer.pth"}
    # the published checkpoint (saved from the GPU on the training machine)
    path = fetch_from_hub(config["hub"], config["name"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    q = Quantizer(config)
    torch.save({"state_dict": {"model." + k: v for k, v in q.state_dict().items()}}, path)

    asr = SpeechRecognizer(config)
    print(asr.transcribe(torch.randn(2, 64)).shape)


if __name__ == "__main__":
    main()
