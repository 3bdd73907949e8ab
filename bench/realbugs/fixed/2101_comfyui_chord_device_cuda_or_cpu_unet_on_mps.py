# source: https://github.com/ubisoft/ComfyUI-Chord/pull/26
# fixed twin: setup() chooses CUDA, then MPS, then the CPU, as ComfyUI does for the UNet; the encoder's move is assigned and repeated in encode_text.
import torch
import torch.nn as nn


def get_torch_device():
    # ComfyUI's model management: CUDA, else Apple's MPS, else the CPU
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class TextEncoder(nn.Module):
    def __init__(self, vocab=64, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, ids):
        return self.mix(self.embed(ids))


class UNet(nn.Module):
    def __init__(self, channels=4, dim=16):
        super().__init__()
        self.to_bias = nn.Linear(dim, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, latents, context):
        bias = self.to_bias(context.mean(dim=1))[:, :, None, None]
        return self.conv(latents) + bias


class StableDiffusion:
    def __init__(self, config):
        self.config = config

    def setup(self):
        if torch.cuda.is_available():
            self.device = torch.device("cuda")
        elif torch.backends.mps.is_available():
            self.device = torch.device("mps")
        else:
            self.device = torch.device("cpu")
        self.dtype = torch.float32
        self.text_encoder = TextEncoder()
        self.text_encoder = self.text_encoder.to(self.device, dtype=self.dtype).eval()
        self.unet = UNet()

    def tokenize(self, prompts):
        rows = [[sum(map(ord, word)) % 64 for word in p.split()][:6] for p in prompts]
        width = max(len(r) for r in rows)
        return torch.tensor([r + [0] * (width - len(r)) for r in rows])

    def encode_text(self, prompts):
        self.text_encoder = self.text_encoder.to(self.device)
        ids = self.tokenize(prompts).to(self.device)
        with torch.no_grad():
            return self.text_encoder(ids)


def load_chord_model(config):
    model = StableDiffusion(config)
    model.setup()
    # the node wraps the UNet in a ModelPatcher; ComfyUI loads it onto its device
    model.unet.to(get_torch_device())
    return model


def sample(model, prompt, steps=3):
    device = get_torch_device()
    context = model.encode_text([prompt])
    latents = torch.randn(1, 4, 8, 8, device=device)
    with torch.no_grad():
        for _ in range(steps):
            latents = latents - 0.1 * model.unet(latents, context)
    return latents


if __name__ == "__main__":
    chord = load_chord_model({"fp16": False})
    print(sample(chord, "weathered red brick wall").shape)
