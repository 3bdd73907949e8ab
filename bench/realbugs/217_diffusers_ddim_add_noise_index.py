# source: https://github.com/huggingface/diffusers/pull/450
# error: indices must be on the same device as the indexed tensor (img2img on mps, issue #239)
# bug: the scheduler keeps alphas_cumprod on the CPU, but the img2img pipeline builds the noising
#      timesteps on the pipeline device; add_noise indexes the CPU table with those device indices.
import numpy as np
import torch


class DDIMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        self.num_train_timesteps = num_train_timesteps
        self.betas = torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps, dtype=torch.float32) ** 2
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.timesteps = np.arange(0, num_train_timesteps)[::-1].copy()

    def set_timesteps(self, num_inference_steps, offset=0):
        self.num_inference_steps = num_inference_steps
        step_ratio = self.num_train_timesteps // num_inference_steps
        self.timesteps = np.arange(0, num_inference_steps) * step_ratio
        self.timesteps = (self.timesteps[::-1] + offset).copy()

    def match_shape(self, values, broadcast_array):
        values = values.flatten()
        while len(values.shape) < len(broadcast_array.shape):
            values = values[..., None]
        return values.to(broadcast_array.device)

    def add_noise(self, original_samples, noise, timesteps):
        sqrt_alpha_prod = self.alphas_cumprod[timesteps] ** 0.5  # expect: DL207
        sqrt_alpha_prod = self.match_shape(sqrt_alpha_prod, original_samples)
        sqrt_one_minus_alpha_prod = (1 - self.alphas_cumprod[timesteps]) ** 0.5
        sqrt_one_minus_alpha_prod = self.match_shape(sqrt_one_minus_alpha_prod, original_samples)
        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


class StableDiffusionImg2ImgPipeline:
    def __init__(self, vae, unet, scheduler, device):
        self.vae = vae.to(device)
        self.unet = unet.to(device)
        self.scheduler = scheduler
        self.device = device

    @torch.no_grad()
    def prepare_latents(self, init_image, strength=0.8, num_inference_steps=50, generator=None):
        self.scheduler.set_timesteps(num_inference_steps, offset=1)
        init_latents = self.vae.encode(init_image.to(self.device)).latent_dist.sample(generator=generator)
        init_latents = 0.18215 * init_latents
        batch_size = init_latents.shape[0]

        init_timestep = int(num_inference_steps * strength) + 1
        init_timestep = min(init_timestep, num_inference_steps)
        timesteps = self.scheduler.timesteps[-init_timestep]
        timesteps = torch.tensor([timesteps] * batch_size, dtype=torch.long, device=self.device)

        noise = torch.randn(init_latents.shape, generator=generator, device=self.device)
        return self.scheduler.add_noise(init_latents, noise, timesteps)
