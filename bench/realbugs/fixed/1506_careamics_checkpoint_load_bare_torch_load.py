# source: https://github.com/CAREamics/careamics/issues/145
# fixed twin: the configuration is read with torch.load mapped to the current device, as the fix (commit 2a63226d) does.
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
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    checkpoint = torch.load(path, map_location=device)
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
