# source: https://github.com/Coloquinte/torchSR/pull/3
# fixed twin: the pretrained weights are downloaded with map_location (the CPU when CUDA is unavailable), as PR 3 (commits 2728c43 / 929860b, refined in d110fa0) does.
import os
import tempfile

import torch
import torch.nn as nn
from torch.hub import load_state_dict_from_url

weight_urls = {
    "r2f8x2": None,  # filled in by main() with a local file:// checkpoint
}


class ResBlock(nn.Module):
    def __init__(self, n_feats, res_scale=1.0):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(n_feats, n_feats, 3, padding=1), nn.ReLU(True),
                                  nn.Conv2d(n_feats, n_feats, 3, padding=1))
        self.res_scale = res_scale

    def forward(self, x):
        return x + self.body(x) * self.res_scale


class EDSR(nn.Module):
    def __init__(self, n_resblocks, n_feats, scale, pretrained=False):
        super().__init__()
        self.scale = scale
        self.url = weight_urls.get("r{}f{}x{}".format(n_resblocks, n_feats, scale))
        self.head = nn.Conv2d(3, n_feats, 3, padding=1)
        self.body = nn.Sequential(*[ResBlock(n_feats) for _ in range(n_resblocks)])
        self.tail = nn.Sequential(nn.Conv2d(n_feats, 3 * scale * scale, 3, padding=1),
                                  nn.PixelShuffle(scale))
        if pretrained:
            self.load_pretrained()

    def forward(self, x):
        x = self.head(x)
        x = x + self.body(x)
        return self.tail(x)

    def load_pretrained(self):
        if self.url is None:
            raise KeyError("no URL for this configuration")
        map_location = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        state_dict = load_state_dict_from_url(self.url, model_dir=self.cache_dir(), map_location=map_location, progress=False)
        self.load_state_dict(state_dict)

    @staticmethod
    def cache_dir():
        return os.path.join(tempfile.gettempdir(), "torchsr_cache_1701")


def edsr_r2f8(scale, pretrained=False):
    return EDSR(2, 8, scale, pretrained=pretrained)


def main():
    # publish a checkpoint (on the machine that trained it, this was saved from the GPU)
    src = os.path.join(tempfile.mkdtemp(), "edsr_r2f8_x2.pt")
    torch.save(EDSR(2, 8, 2).state_dict(), src)
    weight_urls["r2f8x2"] = "file://" + src
    model = edsr_r2f8(2, pretrained=True)
    lr = torch.rand(1, 3, 6, 6)
    with torch.no_grad():
        sr = model(lr)
    print(tuple(sr.shape))


if __name__ == "__main__":
    main()
