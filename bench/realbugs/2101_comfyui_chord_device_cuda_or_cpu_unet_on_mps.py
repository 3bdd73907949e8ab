# source: https://github.com/ubisoft/ComfyUI-Chord/pull/26
# error: RuntimeError: Placeholder storage has not been allocated on MPS device! (issue #18 on an Apple Silicon Mac; the PR quotes the newer wording "Tensor for argument input is on cpu but expected on mps")
# bug: the custom node's diffusion wrapper picks its own device with a CUDA-or-CPU test in setup()
#      and puts the text encoder there, while ComfyUI's model management (which knows MPS) moves
#      the UNet to MPS. On a Mac the prompt embeddings are made on the CPU and reach the UNet's
#      cross-attention on MPS. The fix (PR 26, merged, commit 75aba8a) makes the choice three-way
#      (CUDA, then MPS, then CPU); it also assigns the result of the encoder's .to() and moves the
#      encoder again in encode_text, which do not change the device here. The device-choice line
#      is marked; no rule covers a device choice that disagrees with the host framework's, DL201
#      (the CPU embeddings meeting the UNet's MPS weights) is the closest.
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
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: DL201
        self.dtype = torch.float32
        self.text_encoder = TextEncoder()
        self.text_encoder.to(self.device, dtype=self.dtype).eval()
        self.unet = UNet()

    def tokenize(self, prompts):
        rows = [[sum(map(ord, word)) % 64 for word in p.split()][:6] for p in prompts]
        width = max(len(r) for r in rows)
        return torch.tensor([r + [0] * (width - len(r)) for r in rows])

    def encode_text(self, prompts):
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
