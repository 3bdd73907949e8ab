# source: https://github.com/modelscope/modelscope/issues/220
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the diffusion helper _i looks up a schedule tensor (built on the CPU in __init__ of a plain
#      Python class) with timesteps t that live on the GPU with the latents; PyTorch rejects CUDA
#      indices into a CPU tensor.
import math

import torch
from modelscope.models.multi_modal.video_synthesis.unet_sd import UNetSD


def _i(tensor, t, x):
    r"""Index tensor using t and format the output according to x."""
    shape = (x.size(0), ) + (1, ) * (x.ndim - 1)
    if tensor.device != x.device:
        tensor = tensor.to(x.device)
    return tensor[t].view(shape).to(x)


def beta_schedule(schedule, num_timesteps=1000, init_beta=None, last_beta=None):
    if schedule == 'linear_sd':
        return torch.linspace(init_beta**0.5, last_beta**0.5, num_timesteps, dtype=torch.float64)**2
    elif schedule == 'cosine':
        betas = []
        for step in range(num_timesteps):
            t1 = step / num_timesteps
            t2 = (step + 1) / num_timesteps
            fn = lambda u: math.cos((u + 0.008) / 1.008 * math.pi / 2)**2
            betas.append(min(1.0 - fn(t2) / fn(t1), 0.999))
        return torch.tensor(betas, dtype=torch.float64)
    raise ValueError(f'Unsupported schedule: {schedule}')


class GaussianDiffusion(object):
    def __init__(self, betas, mean_type='eps'):
        self.betas = betas
        self.num_timesteps = len(betas)
        self.mean_type = mean_type
        self.alphas = 1 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, dim=0)
        self.alphas_cumprod_prev = torch.cat([self.alphas_cumprod.new_ones([1]), self.alphas_cumprod[:-1]])
        self.sqrt_alphas_cumprod = torch.sqrt(self.alphas_cumprod)
        self.sqrt_one_minus_alphas_cumprod = torch.sqrt(1.0 - self.alphas_cumprod)
        self.sqrt_recip_alphas_cumprod = torch.sqrt(1.0 / self.alphas_cumprod)
        self.sqrt_recipm1_alphas_cumprod = torch.sqrt(1.0 / self.alphas_cumprod - 1)

    def q_sample(self, x0, t, noise=None):
        noise = torch.randn_like(x0) if noise is None else noise
        return _i(self.sqrt_alphas_cumprod, t, x0) * x0 + \
            _i(self.sqrt_one_minus_alphas_cumprod, t, x0) * noise

    @torch.no_grad()
    def ddim_sample(self, xt, t, model, model_kwargs={}, eta=0.0):
        eps = model(xt, t, **model_kwargs)
        x0 = _i(self.sqrt_recip_alphas_cumprod, t, xt) * xt - _i(self.sqrt_recipm1_alphas_cumprod, t, xt) * eps
        alphas = _i(self.alphas_cumprod, t, xt)
        alphas_prev = _i(self.alphas_cumprod_prev, t, xt)
        sigmas = eta * torch.sqrt((1 - alphas_prev) / (1 - alphas) * (1 - alphas / alphas_prev))
        direction = torch.sqrt(1 - alphas_prev - sigmas**2) * eps
        return torch.sqrt(alphas_prev) * x0 + direction + sigmas * torch.randn_like(xt)

    @torch.no_grad()
    def ddim_sample_loop(self, noise, model, model_kwargs={}, ddim_timesteps=50):
        xt = noise
        b = noise.size(0)
        steps = (1 + torch.arange(0, self.num_timesteps, self.num_timesteps // ddim_timesteps)).clamp(
            0, self.num_timesteps - 1).flip(0)
        for step in steps:
            t = torch.full((b, ), step, dtype=torch.long, device=xt.device)
            xt = self.ddim_sample(xt, t, model, model_kwargs)
        return xt


if __name__ == '__main__':
    diffusion = GaussianDiffusion(beta_schedule('linear_sd', 1000, init_beta=0.00085, last_beta=0.0120))
    unet = UNetSD().cuda().eval()
    noise = torch.randn(1, 4, 16, 32, 32, device='cuda')
    video_latents = diffusion.ddim_sample_loop(noise, unet)
