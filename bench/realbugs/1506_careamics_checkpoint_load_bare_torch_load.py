# source: https://github.com/CAREamics/careamics/issues/145
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the library's pretrained-model loader reads a Lightning checkpoint with `load` imported from
#      torch (a bare name, no map_location) only to get the stored configuration, before rebuilding
#      the module from the same file; a checkpoint written during GPU training cannot be opened for
#      CPU-only prediction. The fix (PR 146, commit 2a63226d) calls torch.load with a map_location of
#      the current device; the changed line is marked (DL301). Here the checkpoint is written on the
#      machine that runs the script, so the CPU run loads.
import os
import tempfile
from pathlib import Path

import torch.nn as nn
from torch import load, save
import torch


class DenoisingModule(nn.Module):
    def __init__(self, depth=2, channels=8):
        super().__init__()
        layers, c_in = [], 1
        for _ in range(depth):
            layers += [nn.Conv2d(c_in, channels, 3, padding=1), nn.ReLU()]
            c_in = channels
        layers.append(nn.Conv2d(c_in, 1, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)

    @classmethod
    def load_from_checkpoint(cls, path):
        ckpt = load(path, map_location="cpu")
        model = cls(**ckpt["hyper_parameters"]["model"])
        model.load_state_dict(ckpt["state_dict"])
        return model


def _load_checkpoint(path):
    checkpoint = load(path)  # expect: DL301
    try:
        cfg_dict = checkpoint["hyper_parameters"]
    except KeyError as e:
        raise ValueError(f"Invalid checkpoint file: {list(checkpoint)}") from e
    model = DenoisingModule.load_from_checkpoint(path)
    return model, cfg_dict


def load_pretrained(path):
    path = Path(path)
    if path.suffix == ".ckpt":
        return _load_checkpoint(path)
    raise ValueError(f"Invalid model format {path.suffix}")


class CAREamist:
    def __init__(self, source):
        self.model, self.cfg = load_pretrained(source)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()

    @torch.no_grad()
    def predict(self, image):
        return self.model(image.to(self.device)).cpu()


if __name__ == "__main__":
    ckpt = os.path.join(tempfile.mkdtemp(), "n2v_1epoch.ckpt")
    trained = DenoisingModule(depth=2)
    save({"state_dict": trained.state_dict(), "hyper_parameters": {"model": {"depth": 2}}}, ckpt)
    careamist = CAREamist(ckpt)
    print(careamist.predict(torch.randn(1, 1, 16, 16)).shape)
