# source: https://github.com/huggingface/diffusers/pull/648
# fixed twin: add_noise moves alphas_cumprod and the timesteps to original_samples.device, as commit 3304538229 does.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DDPMScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02):
        self.num_train_timesteps = num_train_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_train_timesteps, dtype=torch.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)

    def add_noise(self, original_samples, noise, timesteps):
        if self.alphas_cumprod.device != original_samples.device:
            self.alphas_cumprod = self.alphas_cumprod.to(original_samples.device)

        if timesteps.device != original_samples.device:
            timesteps = timesteps.to(original_samples.device)

        sqrt_alpha_prod = self.alphas_cumprod[timesteps] ** 0.5
        sqrt_alpha_prod = sqrt_alpha_prod.flatten()
        while len(sqrt_alpha_prod.shape) < len(original_samples.shape):
            sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)

        sqrt_one_minus_alpha_prod = (1 - self.alphas_cumprod[timesteps]) ** 0.5
        sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.flatten()
        while len(sqrt_one_minus_alpha_prod.shape) < len(original_samples.shape):
            sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)

        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


class TinyUNet(nn.Module):
    def __init__(self, channels=3, hidden=16):
        super().__init__()
        self.time = nn.Embedding(1000, hidden)
        self.inp = nn.Conv2d(channels, hidden, 3, padding=1)
        self.out = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x, t):
        return self.out(F.silu(self.inp(x) + self.time(t)[:, :, None, None]))


def train_step(model, noise_scheduler, optimizer, clean_images):
    noise = torch.randn(clean_images.shape).to(clean_images.device)
    bsz = clean_images.shape[0]
    timesteps = torch.randint(0, noise_scheduler.num_train_timesteps, (bsz,), device=clean_images.device).long()
    noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
    loss = F.mse_loss(model(noisy_images, timesteps), noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyUNet().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    print(train_step(model, DDPMScheduler(), optimizer, torch.randn(4, 3, 16, 16, device=device)))
