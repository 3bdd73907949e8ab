# source: https://github.com/Lornatang/GAN-PyTorch/issues/1
# fixed twin: commit ccf4245 (PR #2) maps the released weights to the machine's device:
#             map_location=torch.device("cuda" if torch.cuda.is_available() else "cpu").
import os
import tempfile

import torch
import torch.nn as nn
from torch.hub import load_state_dict_from_url

__all__ = ["Discriminator", "Generator", "discriminator", "mnist"]

model_urls = {
    "mnist": "https://github.com/Lornatang/GAN-PyTorch/releases/download/0.1.2/mnist-5539a1a7.pth",
}


class Discriminator(nn.Module):
    def __init__(self, image_size: int = 28, channels: int = 1):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(nn.Linear(channels * image_size * image_size, 512), nn.LeakyReLU(0.2, True),
                                  nn.Linear(512, 1), nn.Sigmoid())

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return self.main(torch.flatten(input, 1))


class Generator(nn.Module):
    def __init__(self, image_size: int = 28, channels: int = 1):
        super(Generator, self).__init__()
        self.image_size = image_size
        self.channels = channels
        self.main = nn.Sequential(nn.Linear(100, 128), nn.LeakyReLU(0.2, True), nn.Linear(128, 256),
                                  nn.BatchNorm1d(256), nn.LeakyReLU(0.2, True),
                                  nn.Linear(256, channels * image_size * image_size), nn.Tanh())

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        out = self.main(input)
        return out.reshape(out.size(0), self.channels, self.image_size, self.image_size)


def _gan(arch, image_size, channels, pretrained, progress):
    model = Generator(image_size, channels)
    if pretrained:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        state_dict = load_state_dict_from_url(model_urls[arch], progress=progress, map_location=device)
        model.load_state_dict(state_dict)
    return model


def discriminator(image_size, channels) -> Discriminator:
    return Discriminator(image_size, channels)


def mnist(pretrained: bool = False, progress: bool = True) -> Generator:
    return _gan("mnist", 28, 1, pretrained, progress)


def publish_release(arch):
    torch.hub.set_dir(tempfile.mkdtemp())
    release = Generator(28, 1)
    if torch.cuda.is_available():
        release = release.cuda()
    ckpt_dir = os.path.join(torch.hub.get_dir(), "checkpoints")
    os.makedirs(ckpt_dir, exist_ok=True)
    torch.save(release.state_dict(), os.path.join(ckpt_dir, os.path.basename(model_urls[arch])))


if __name__ == "__main__":
    publish_release("mnist")
    model = mnist(pretrained=True)
    print(model)
