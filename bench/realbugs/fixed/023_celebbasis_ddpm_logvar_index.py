# source: https://github.com/ygtxr1997/CelebBasis/issues/8
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the per-timestep log-variance table is a plain tensor attribute made with torch.full in
#      __init__, so it stays on the CPU when the diffusion model is moved to the GPU; p_losses then
#      indexes it with the CUDA timestep tensor t.
import torch
import torch.nn as nn


class DDPM(nn.Module):
    def __init__(self, unet, num_timesteps=1000, logvar_init=0.0, learn_logvar=False):
        super().__init__()
        self.model = unet
        self.num_timesteps = num_timesteps
        self.learn_logvar = learn_logvar
        self.logvar = torch.full(fill_value=logvar_init, size=(self.num_timesteps,))
        if self.learn_logvar:
            self.logvar = nn.Parameter(self.logvar, requires_grad=True)
        betas = torch.linspace(1e-4, 2e-2, num_timesteps)
        self.register_buffer("sqrt_alphas_cumprod", torch.sqrt(torch.cumprod(1.0 - betas, dim=0)))
        self.register_buffer("sqrt_one_minus_alphas_cumprod", torch.sqrt(1.0 - torch.cumprod(1.0 - betas, dim=0)))

    @property
    def device(self):
        return next(self.parameters()).device

    def q_sample(self, x_start, t, noise):
        a = self.sqrt_alphas_cumprod[t].view(-1, 1, 1, 1)
        b = self.sqrt_one_minus_alphas_cumprod[t].view(-1, 1, 1, 1)
        return a * x_start + b * noise

    def p_losses(self, x_start, cond, t):
        noise = torch.randn_like(x_start)
        x_noisy = self.q_sample(x_start=x_start, t=t, noise=noise)
        model_output = self.model(x_noisy, t, cond)
        loss_simple = ((model_output - noise) ** 2).mean([1, 2, 3])
        logvar_t = self.logvar[t.cpu()].to(self.device)
        loss = loss_simple / torch.exp(logvar_t) + logvar_t
        return loss.mean()

    def forward(self, x, c):
        t = torch.randint(0, self.num_timesteps, (x.shape[0],), device=self.device).long()
        return self.p_losses(x, c, t)
