# source: https://github.com/huggingface/diffusers/pull/1177
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu' (the offloading tests on a GPU; the
#        pipeline drew its latents on self.device, the CPU, with the user's CUDA generator)
# bug: with CPU offloading the pipeline's weights stay on the host (or on "meta", which its device property reports as
#      the CPU) and hooks run each model on the GPU. __call__ still places everything on self.device: the prompt ids it
#      hands the text encoder and the initial latents it draws with the caller's CUDA generator. The merged fix
#      (commit 24895a1) adds an _execution_device property read from the offload hooks and uses it in __call__; the
#      changed lines for the prompt ids (DL203: a model input not moved to where the model runs; the closest rule) and
#      the latents (DL208: drawing with a generator on another device) are marked.
import torch
import torch.nn as nn


class TextEncoder(nn.Module):
    def __init__(self, vocab=64, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, ids):
        return (self.proj(self.embed(ids)),)


class UNet(nn.Module):
    in_channels = 4

    def __init__(self, dim=8):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.cond = nn.Linear(dim, 4)

    def forward(self, x, t, encoder_hidden_states):
        c = self.cond(encoder_hidden_states.mean(dim=1))[:, :, None, None]
        return self.conv(x) + c * t.float().div(1000)


class ExecHook:
    def __init__(self, module, execution_device):
        self.execution_device = execution_device
        module._hf_hook = self
        module.register_forward_pre_hook(self.pre_forward)

    def pre_forward(self, module, args):
        module.to(self.execution_device)


class Scheduler:
    def set_timesteps(self, n, device=None):
        self.timesteps = torch.linspace(900, 100, n, device=device).long()

    def step(self, pred, t, latents):
        return latents - 0.1 * pred


class DiffusionPipeline:
    @property
    def device(self):
        for name in ("text_encoder", "unet"):
            module = getattr(self, name)
            dev = next(module.parameters()).device
            if dev == torch.device("meta"):
                return torch.device("cpu")
            return dev
        return torch.device("cpu")


class StableDiffusionPipeline(DiffusionPipeline):
    def __init__(self, text_encoder, unet, scheduler):
        self.text_encoder, self.unet, self.scheduler = text_encoder, unet, scheduler

    def enable_sequential_cpu_offload(self, gpu_id=0):
        device = torch.device(f"cuda:{gpu_id}") if torch.cuda.is_available() else torch.device("cpu")
        for model in (self.text_encoder, self.unet):
            ExecHook(model.to("cpu"), device)

    @torch.no_grad()
    def __call__(self, prompt_ids, num_inference_steps=4, generator=None, latents=None):
        text_embeddings = self.text_encoder(prompt_ids.to(self.device))[0]  # expect: DL203
        shape = (prompt_ids.shape[0], self.unet.in_channels, 8, 8)
        if latents is None:
            latents = torch.randn(shape, generator=generator, device=self.device)  # expect: DL208
        else:
            latents = latents.to(self.device)
        self.scheduler.set_timesteps(num_inference_steps, device=self.device)
        for t in self.scheduler.timesteps:
            noise_pred = self.unet(latents, t, encoder_hidden_states=text_embeddings)
            latents = self.scheduler.step(noise_pred, t, latents)
        return latents.cpu()


if __name__ == "__main__":
    pipe = StableDiffusionPipeline(TextEncoder(), UNet(), Scheduler())
    pipe.enable_sequential_cpu_offload()
    gen_device = "cuda" if torch.cuda.is_available() else "cpu"
    generator = torch.Generator(device=gen_device).manual_seed(0)
    print(pipe(torch.randint(0, 64, (1, 7)), generator=generator).shape)
