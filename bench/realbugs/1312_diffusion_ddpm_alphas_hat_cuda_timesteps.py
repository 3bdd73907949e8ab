# source: https://github.com/mattroz/diffusion-ddpm/issues/5
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the DDPM pipeline precomputes betas/alphas_hat with torch.linspace/cumprod on the CPU, and
#      the UNet's sinusoidal time embedding keeps its table as a plain tensor attribute (not a
#      buffer, so model.to(device) leaves it on the CPU); the training loop draws the timesteps on
#      the training device and both tables are indexed with those CUDA timesteps before the result
#      is moved. The issue (open, no fix) reports the first line, and the second once the first was
#      patched; both indexing lines are marked (DL207). No fixed twin: no fix was given.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def broadcast(values, broadcast_to):
    values = values.flatten()
    while len(values.shape) < len(broadcast_to.shape):
        values = values.unsqueeze(-1)
    return values


class DDPMPipeline:
    def __init__(self, beta_start=1e-4, beta_end=1e-2, num_timesteps=1000):
        self.betas = torch.linspace(beta_start, beta_end, num_timesteps)
        self.alphas = 1 - self.betas
        self.alphas_hat = torch.cumprod(self.alphas, dim=0)
        self.num_timesteps = num_timesteps

    def forward_diffusion(self, images, timesteps):
        gaussian_noise = torch.randn(images.shape).to(images.device)
        alpha_hat = self.alphas_hat[timesteps].to(images.device)  # expect: DL207
        alpha_hat = broadcast(alpha_hat, images)
        return torch.sqrt(alpha_hat) * images + torch.sqrt(1 - alpha_hat) * gaussian_noise, gaussian_noise


class TransformerPositionalEmbedding(nn.Module):
    def __init__(self, dimension, max_timesteps=1000):
        super().__init__()
        self.pe_matrix = torch.zeros(max_timesteps, dimension)
        even_indices = torch.arange(0, dimension, 2)
        div_term = torch.exp(even_indices * -(math.log(10000.0) / dimension))
        timesteps = torch.arange(max_timesteps).unsqueeze(1)
        self.pe_matrix[:, 0::2] = torch.sin(timesteps * div_term)
        self.pe_matrix[:, 1::2] = torch.cos(timesteps * div_term)

    def forward(self, timestep):
        return self.pe_matrix[timestep].to(timestep.device)  # expect: DL207


class TinyUNet(nn.Module):
    def __init__(self, channels=3, hidden=16, time_dim=32):
        super().__init__()
        self.time_embedding = TransformerPositionalEmbedding(time_dim)
        self.time_mlp = nn.Linear(time_dim, hidden)
        self.inp = nn.Conv2d(channels, hidden, 3, padding=1)
        self.out = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x, timestep):
        t = self.time_mlp(self.time_embedding(timestep))
        return self.out(F.silu(self.inp(x) + t[:, :, None, None]))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = TinyUNet().to(device)
    pipeline = DDPMPipeline(num_timesteps=100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    original_images = torch.randn(4, 3, 16, 16).to(device)
    timesteps = torch.randint(0, pipeline.num_timesteps, (original_images.shape[0],), device=device).long()
    noisy_images, noise = pipeline.forward_diffusion(original_images, timesteps)
    noise_pred = model(noisy_images.to(device), timesteps)
    loss = F.l1_loss(noise_pred, noise)
    loss.backward()
    optimizer.step()
    print(loss.item())
