# source: https://github.com/rohitgandikota/sliders/issues/20
# error: trainscripts/textsliders/train_lora.py line 189 train -> latents = train_util.get_initial_latents(...) ->
#        train_util.py line 55 latents = noise * scheduler.init_noise_sigma
#        RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: train_lora.py trains on torch.device(f"cuda:{args.device}") and at every iteration calls
#      noise_scheduler.set_timesteps(max_denoising_steps, device=device); train_util.get_initial_latents draws the
#      noise with get_random_noise(..., device="cpu") and scales it by scheduler.init_noise_sigma before the caller
#      moves the latents .to(device). For "ddim"/"ddpm" init_noise_sigma is the float 1.0 ("lms" makes it sigmas.max(), on the device, as euler_a), but for "euler_a"
#      (EulerAncestralDiscreteScheduler in the pinned diffusers 0.20.2, read from the fetched diffusers repository at
#      tag v0.20.2: set_timesteps stores self.sigmas = torch.from_numpy(sigmas).to(device=device) and the
#      init_noise_sigma property returns self.sigmas.max() for timestep_spacing "linspace") it is a 0-dim CUDA tensor,
#      which PyTorch does not broadcast onto a CPU tensor. The issue is closed with the reporter's workaround only
#      (noise and init_noise_sigma moved to "cuda"); the repository's train_util.py is unchanged, so no twin. The
#      traceback line is marked (DL201). Reductions: the schedulers are small stand-ins with the v0.20.2 sigma/
#      timestep handling; the UNet/text encoder/LoRA network, prompt pairs and the denoising loop are a conv layer
#      and an MSE step; config is a namespace.
import argparse
from types import SimpleNamespace

import torch
import torch.nn as nn

UNET_IN_CHANNELS = 4
VAE_SCALE_FACTOR = 8


class DDIMScheduler:
    def __init__(self, num_train_timesteps=1000):
        self.num_train_timesteps = num_train_timesteps
        self.init_noise_sigma = 1.0
        self.timesteps = torch.arange(num_train_timesteps).flip(0)

    def set_timesteps(self, num_inference_steps, device=None):
        step = self.num_train_timesteps // num_inference_steps
        self.timesteps = (torch.arange(0, num_inference_steps) * step).flip(0).to(device)


class EulerAncestralDiscreteScheduler:
    def __init__(self, beta_start=0.00085, beta_end=0.012, num_train_timesteps=1000, timestep_spacing="linspace"):
        self.config = SimpleNamespace(num_train_timesteps=num_train_timesteps, timestep_spacing=timestep_spacing)
        self.betas = torch.linspace(beta_start ** 0.5, beta_end ** 0.5, num_train_timesteps, dtype=torch.float32) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - self.betas, dim=0)
        sigmas = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        self.sigmas = torch.cat([sigmas.flip(0), torch.zeros(1)])
        self.timesteps = torch.linspace(0, num_train_timesteps - 1, num_train_timesteps).flip(0)

    @property
    def init_noise_sigma(self):
        if self.config.timestep_spacing in ["linspace", "trailing"]:
            return self.sigmas.max()
        return (self.sigmas.max() ** 2 + 1) ** 0.5

    def set_timesteps(self, num_inference_steps, device=None):
        timesteps = torch.linspace(0, self.config.num_train_timesteps - 1, num_inference_steps).flip(0)
        full = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        sigmas = torch.cat([full[timesteps.long()], torch.zeros(1)])
        self.sigmas = sigmas.to(device=device)
        self.timesteps = timesteps.to(device=device)


def create_noise_scheduler(scheduler_name="ddpm"):
    name = scheduler_name.lower().replace(" ", "_")
    if name == "ddim":
        return DDIMScheduler()
    elif name == "euler_a":
        return EulerAncestralDiscreteScheduler(beta_start=0.00085, beta_end=0.012, num_train_timesteps=1000)
    raise ValueError(f"Unknown scheduler name: {name}")


# --- train_util.py ---
def get_random_noise(batch_size: int, height: int, width: int, generator: torch.Generator = None) -> torch.Tensor:
    return torch.randn(
        (batch_size, UNET_IN_CHANNELS, height // VAE_SCALE_FACTOR, width // VAE_SCALE_FACTOR),
        generator=generator,
        device="cpu",
    )


def get_initial_latents(scheduler, n_imgs: int, height: int, width: int, n_prompts: int, generator=None) -> torch.Tensor:
    noise = get_random_noise(n_imgs, height, width, generator=generator).repeat(
        n_prompts, 1, 1, 1
    )

    latents = noise * scheduler.init_noise_sigma  # expect: DL201

    return latents


# --- train_lora.py ---
def train(config, device):
    weight_dtype = torch.float32
    noise_scheduler = create_noise_scheduler(config.train.noise_scheduler)
    unet = nn.Conv2d(UNET_IN_CHANNELS, UNET_IN_CHANNELS, 3, padding=1)
    unet.to(device, dtype=weight_dtype)
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    for i in range(config.train.iterations):
        with torch.no_grad():
            noise_scheduler.set_timesteps(
                config.train.max_denoising_steps, device=device
            )
            optimizer.zero_grad()
            height, width = 64, 64
            latents = get_initial_latents(
                noise_scheduler, 1, height, width, 1
            ).to(device, dtype=weight_dtype)
        loss = (unet(latents) - latents).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(i, loss.item())


def main(args):
    config = SimpleNamespace(train=SimpleNamespace(noise_scheduler=args.noise_scheduler, iterations=3,
                                                   max_denoising_steps=50))
    device = torch.device(f"cuda:{args.device}")
    train(config, device)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--noise_scheduler", default="euler_a")
    main(parser.parse_args())
