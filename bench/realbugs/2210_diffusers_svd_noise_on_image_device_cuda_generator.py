# source: https://github.com/huggingface/diffusers/pull/6484
# error: ValueError: Cannot generate a cpu tensor from a generator of type cuda. (randn_tensor, with generator=torch.Generator(device="cuda") and pipe.enable_model_cpu_offload())
# bug: the Stable Video Diffusion pipeline preprocesses the conditioning image on the CPU and draws
#      its noise-augmentation noise with randn_tensor(image.shape, generator=generator,
#      device=image.device); with a generator made on CUDA, as the docs suggest, the noise is asked
#      of a CUDA generator on the CPU, which randn_tensor refuses (a CPU generator for a CUDA tensor
#      it allows, drawing on the CPU and copying). The merged PR moves the preprocessed image to the
#      execution device and draws the noise on that device. The noise line is marked (DL208: a
#      generator used to draw on another device than its own); the preprocess line the PR also
#      changes is not wrong by itself (the VAE encoder moves the image anyway) and is left unmarked.
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
        image = self.preprocess(image, height=height, width=width)
        noise = randn_tensor(image.shape, generator=generator, device=image.device, dtype=image.dtype)  # expect: DL208
        image = image + noise_aug_strength * noise
        return self._encode_vae_image(image, device)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pipe = StableVideoDiffusionPipeline(TinyVAE().to(device))
    generator = torch.Generator(device=device).manual_seed(42)
    latents = pipe(torch.rand(1, 3, 80, 96), generator=generator)
    print(latents.shape, latents.device)
