# source: https://github.com/huggingface/diffusers/pull/648
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0 (in DDPMScheduler.add_noise)
# bug: the scheduler keeps alphas_cumprod on the CPU, and add_noise answered an earlier indexing
#      error by moving the training timesteps to the table's device (the CPU); the per-sample
#      sqrt(alpha_prod) factors it gathers are then CPU vectors, broadcast against the GPU latents
#      in the return expression. The fix (commit 3304538229) instead moves alphas_cumprod and the
#      timesteps to original_samples.device (also in DDIM; PNDM drops the same line). The changed
#      line is marked (DL201, closest rule: the mixing is in the return; the move sends the index
#      the wrong way). The same commit's unrelated fix of a discarded .flatten() is applied here.
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
        timesteps = timesteps.to(self.alphas_cumprod.device)  # expect: DL201

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
