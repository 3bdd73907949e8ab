# source: https://github.com/CompVis/latent-diffusion/pull/282
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor
# bug: the per-timestep log-variance table is a plain tensor attribute (a Parameter only when
#      learn_logvar=True), so it stays on the CPU; p_losses indexes it with the CUDA timesteps t
#      before moving the result to the model's device.
import numpy as np
import torch
import torch.nn as nn
import pytorch_lightning as pl


class DDPM(pl.LightningModule):
    def __init__(self, unet, timesteps=1000, learn_logvar=False, logvar_init=0., l_simple_weight=1.,
                 original_elbo_weight=0.):
        super().__init__()
        self.model = unet
        self.num_timesteps = int(timesteps)
        self.l_simple_weight = l_simple_weight
        self.original_elbo_weight = original_elbo_weight
        betas = np.linspace(1e-4, 2e-2, timesteps)
        alphas_cumprod = np.cumprod(1. - betas)
        self.register_buffer('sqrt_alphas_cumprod', torch.tensor(np.sqrt(alphas_cumprod), dtype=torch.float32))
        self.register_buffer('sqrt_one_minus_alphas_cumprod',
                             torch.tensor(np.sqrt(1. - alphas_cumprod), dtype=torch.float32))
        self.register_buffer('lvlb_weights', torch.ones(timesteps), persistent=False)
        self.learn_logvar = learn_logvar
        self.logvar = torch.full(fill_value=logvar_init, size=(self.num_timesteps,))
        if self.learn_logvar:
            self.logvar = nn.Parameter(self.logvar, requires_grad=True)

    def q_sample(self, x_start, t, noise):
        return (self.sqrt_alphas_cumprod[t][:, None, None, None] * x_start +
                self.sqrt_one_minus_alphas_cumprod[t][:, None, None, None] * noise)

    def p_losses(self, x_start, cond, t, noise=None):
        noise = torch.randn_like(x_start) if noise is None else noise
        x_noisy = self.q_sample(x_start=x_start, t=t, noise=noise)
        model_output = self.model(x_noisy, t, context=cond)
        prefix = 'train' if self.training else 'val'
        loss_dict = {}
        loss_simple = (model_output - noise).pow(2).mean([1, 2, 3])
        loss_dict.update({f'{prefix}/loss_simple': loss_simple.mean()})

        logvar_t = self.logvar[t].to(self.device)  # expect: DL207
        loss = loss_simple / torch.exp(logvar_t) + logvar_t
        loss = self.l_simple_weight * loss.mean()

        loss_vlb = (model_output - noise).pow(2).mean(dim=(1, 2, 3))
        loss_vlb = (self.lvlb_weights[t] * loss_vlb).mean()
        loss += (self.original_elbo_weight * loss_vlb)
        loss_dict.update({f'{prefix}/loss': loss})
        return loss, loss_dict

    def training_step(self, batch, batch_idx):
        x, c = batch['image'], batch['caption']
        t = torch.randint(0, self.num_timesteps, (x.shape[0],), device=self.device).long()
        loss, loss_dict = self.p_losses(x, c, t)
        self.log_dict(loss_dict)
        return loss
