# source: https://github.com/kohya-ss/sd-scripts/pull/2153
# fixed twin: alphas_cumprod is moved back to the CPU right after add_noise, the PR's change (open upstream).
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class DDIMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        self.config = SimpleNamespace(num_train_timesteps=num_train_timesteps)
        betas = torch.linspace(beta_start**0.5, beta_end**0.5, num_train_timesteps) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    def add_noise(self, original_samples, noise, timesteps):
        self.alphas_cumprod = self.alphas_cumprod.to(device=original_samples.device)
        alphas_cumprod = self.alphas_cumprod.to(dtype=original_samples.dtype)
        timesteps = timesteps.to(original_samples.device)
        sqrt_alpha_prod = (alphas_cumprod[timesteps] ** 0.5).view(-1, 1, 1, 1)
        sqrt_one_minus_alpha_prod = ((1 - alphas_cumprod[timesteps]) ** 0.5).view(-1, 1, 1, 1)
        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


def get_noise_noisy_latents_and_timesteps(args, noise_scheduler, latents):
    noise = torch.randn_like(latents, device=latents.device)
    b_size = latents.shape[0]
    timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (b_size,), device=latents.device).long()
    noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
    noise_scheduler.alphas_cumprod = noise_scheduler.alphas_cumprod.cpu()
    return noise, noisy_latents, timesteps


def get_huber_threshold_if_needed(args, timesteps, noise_scheduler):
    if args.loss_type not in ("huber", "smooth_l1"):
        return None
    if args.huber_schedule == "exponential":
        alpha = -math.log(args.huber_c) / noise_scheduler.config.num_train_timesteps
        return torch.exp(-alpha * timesteps) * args.huber_scale
    alphas_cumprod = torch.index_select(noise_scheduler.alphas_cumprod, 0, timesteps.cpu())
    sigmas = ((1.0 - alphas_cumprod) / alphas_cumprod) ** 0.5
    result = (1 - args.huber_c) / (1 + sigmas) ** 2 + args.huber_c
    return result.to(timesteps.device)


def conditional_loss(model_pred, target, loss_type, huber_c=None):
    if loss_type == "l2":
        return F.mse_loss(model_pred, target, reduction="none")
    huber_c = huber_c.view(-1, 1, 1, 1)
    return 2 * huber_c * (torch.sqrt((model_pred - target) ** 2 + huber_c**2) - huber_c)


def process_batch(args, unet, noise_scheduler, latents):
    noise, noisy_latents, timesteps = get_noise_noisy_latents_and_timesteps(args, noise_scheduler, latents)
    noise_pred = unet(noisy_latents)
    huber_c = get_huber_threshold_if_needed(args, timesteps, noise_scheduler)
    return conditional_loss(noise_pred, noise, args.loss_type, huber_c).mean()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    args = SimpleNamespace(loss_type="huber", huber_schedule="snr", huber_c=0.1, huber_scale=1.0)
    unet = nn.Conv2d(4, 4, 3, padding=1).to(device)
    noise_scheduler = DDIMScheduler()
    latents = torch.randn(2, 4, 8, 8, device=device)
    loss = process_batch(args, unet, noise_scheduler, latents)
    loss.backward()
    print(loss.item())
