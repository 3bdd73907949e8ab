# source: https://github.com/huggingface/diffusers/pull/13228
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'
# bug: the pyramid pipeline's block-noise sampler draws torch.randn on the pipeline's execution
#      device with the user's generator; a CPU generator (the usual choice for reproducibility)
#      cannot drive a CUDA draw.
import torch
from diffusers import DiffusionPipeline


class HeliosPyramidPipeline(DiffusionPipeline):
    def __init__(self, transformer, vae, scheduler):
        super().__init__()
        self.register_modules(transformer=transformer, vae=vae, scheduler=scheduler)

    def sample_block_noise(self, batch_size, channel, num_frames, height, width, patch_size, device, generator):
        gamma = self.scheduler.config.gamma
        _, ph, pw = patch_size
        block_size = ph * pw
        cov = torch.eye(block_size, device=device) * (1 + gamma) - torch.ones(block_size, block_size, device=device) * gamma
        cov += torch.eye(block_size, device=device) * 1e-8
        L = torch.linalg.cholesky(cov.float())
        block_number = batch_size * channel * num_frames * (height // ph) * (width // pw)
        z = torch.randn(block_number, block_size, device=device, generator=generator)  # expect: DL208
        noise = z @ L.T
        noise = noise.view(batch_size, channel, num_frames, height // ph, width // pw, ph, pw)
        return noise.permute(0, 1, 2, 3, 5, 4, 6).reshape(batch_size, channel, num_frames, height, width)

    @torch.no_grad()
    def __call__(self, latents, num_inference_steps=8, generator=None):
        device = self._execution_device
        batch_size, channel, num_frames, height, width = latents.shape
        self.scheduler.set_timesteps(num_inference_steps, device=device)
        for i, t in enumerate(self.scheduler.timesteps):
            if i > 0 and i % 4 == 0:
                height, width = height * 2, width * 2
                latents = torch.nn.functional.interpolate(latents.flatten(1, 2), size=(height, width))
                latents = latents.view(batch_size, channel, num_frames, height, width)
                noise = self.sample_block_noise(
                    batch_size, channel, num_frames, height, width, (1, 2, 2), device, generator
                )
                latents = latents + 0.1 * noise.to(latents.dtype)
            noise_pred = self.transformer(latents, t).sample
            latents = self.scheduler.step(noise_pred, t, latents).prev_sample
        return self.vae.decode(latents).sample


if __name__ == "__main__":
    pipe = HeliosPyramidPipeline.from_pretrained("BestWishYsh/Helios-Distilled").to("cuda")
    latents = torch.randn(1, 16, 9, 32, 32, device="cuda")
    video = pipe(latents, generator=torch.Generator("cpu").manual_seed(42))
