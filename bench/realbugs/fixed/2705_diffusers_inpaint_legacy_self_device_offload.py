# source: https://github.com/huggingface/diffusers/pull/3773
# fixed twin: the image, the noise and the mask are placed on the execution device handed to (or computed in) the
#             function, not on self.device (merged fix, commit 2715079).
import torch
import torch.nn as nn


class VAE(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.enc = nn.Conv2d(3, channels, 4, stride=4)
        self.scaling_factor = 0.18

    def encode(self, image):
        return self(image)

    def forward(self, image):
        return self.enc(image)


class UNet(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, latents, t):
        return self.conv(latents) * (1.0 + t.float() / 1000)


def attach_offload_hook(module, execution_device):
    def pre_forward(m, args):
        m.to(execution_device)

    module.to("cpu")
    return module.register_forward_pre_hook(pre_forward)


class Scheduler:
    def __init__(self, steps=1000):
        self.alphas_cumprod = torch.linspace(0.999, 0.01, steps)
        self.timesteps = torch.tensor([600, 400, 200])

    def add_noise(self, x, noise, t):
        a = self.alphas_cumprod.to(x.device)[t.to(x.device)].sqrt()
        return a * x + (1 - a) * noise

    def step(self, pred, t, latents):
        return latents - 0.05 * pred


class InpaintPipelineLegacy:
    def __init__(self, vae, unet, scheduler):
        self.vae, self.unet, self.scheduler = vae, unet, scheduler
        self._exec = None

    @property
    def device(self):
        return next(self.vae.parameters()).device

    @property
    def _execution_device(self):
        return self._exec or self.device

    def enable_model_cpu_offload(self, device):
        self._exec = torch.device(device)
        for module in (self.vae, self.unet):
            attach_offload_hook(module, self._exec)

    def prepare_latents(self, image, timestep, num_images_per_prompt, dtype, device, generator):
        image = image.to(device=device, dtype=dtype)
        init_latents = self.vae.scaling_factor * self.vae.encode(image)
        init_latents = torch.cat([init_latents] * num_images_per_prompt, dim=0)
        init_latents_orig = init_latents
        noise = torch.randn(init_latents.shape, generator=generator, device=device, dtype=dtype)
        latents = self.scheduler.add_noise(init_latents, noise, timestep)
        return latents, init_latents_orig, noise

    @torch.no_grad()
    def __call__(self, image, mask_image, num_images_per_prompt=1, generator=None):
        device = self._execution_device
        timesteps = self.scheduler.timesteps.to(device)
        latent_timestep = timesteps[:1]
        latents, init_latents_orig, noise = self.prepare_latents(
            image, latent_timestep, num_images_per_prompt, torch.float32, device, generator
        )
        mask = mask_image.to(device=device, dtype=latents.dtype)
        mask = torch.cat([mask] * num_images_per_prompt)
        for t in timesteps:
            noise_pred = self.unet(latents, t)
            latents = self.scheduler.step(noise_pred, t, latents)
            init_latents_proper = self.scheduler.add_noise(init_latents_orig, noise, t.reshape(1))
            latents = (init_latents_proper * mask) + (latents * (1 - mask))
        return (init_latents_orig * mask) + (latents * (1 - mask))


if __name__ == "__main__":
    pipe = InpaintPipelineLegacy(VAE(), UNet(), Scheduler())
    pipe.enable_model_cpu_offload("cuda" if torch.cuda.is_available() else "cpu")
    image = torch.rand(1, 3, 32, 32)
    mask_image = (torch.rand(1, 1, 8, 8) > 0.5).float()
    print(pipe(image, mask_image).shape)
