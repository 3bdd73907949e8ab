# source: https://github.com/huggingface/diffusers/pull/6484
# fixed twin: the preprocessed image is moved to the execution device and the noise is drawn there (the merged PR).
import torch
import torch.nn as nn


def randn_tensor(shape, generator=None, device=None, dtype=None):
    device = torch.device(device) if device is not None else torch.device("cpu")
    rand_device = device
    if generator is not None:
        gen_type = generator.device.type
        if gen_type != device.type and gen_type == "cpu":
            rand_device = "cpu"
        elif gen_type != device.type and gen_type == "cuda":
            raise ValueError(f"Cannot generate a {device} tensor from a generator of type {gen_type}.")
    return torch.randn(shape, generator=generator, device=rand_device, dtype=dtype).to(device)


class TinyVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 4, 3, stride=2, padding=1)

    def encode(self, x):
        return self.enc(x)


class StableVideoDiffusionPipeline:
    def __init__(self, vae):
        self.vae = vae

    @property
    def _execution_device(self):
        return next(self.vae.parameters()).device

    def preprocess(self, image, height, width):
        return torch.nn.functional.interpolate(image, size=(height, width)) * 2.0 - 1.0

    def _encode_vae_image(self, image, device):
        return self.vae.encode(image.to(device))

    def __call__(self, image, height=64, width=64, noise_aug_strength=0.02, generator=None):
        device = self._execution_device
        image = self.preprocess(image, height=height, width=width).to(device)
        noise = randn_tensor(image.shape, generator=generator, device=device, dtype=image.dtype)
        image = image + noise_aug_strength * noise
        return self._encode_vae_image(image, device)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pipe = StableVideoDiffusionPipeline(TinyVAE().to(device))
    generator = torch.Generator(device=device).manual_seed(42)
    latents = pipe(torch.rand(1, 3, 80, 96), generator=generator)
    print(latents.shape, latents.device)
