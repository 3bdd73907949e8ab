# source: https://github.com/huggingface/diffusers/pull/6937
# error: RuntimeError: Expected all tensors to be on the same device (the second generation after
#        enable_model_cpu_offload(device="xpu"): the pipeline now offloads to and executes on "cuda")
# bug: model offloading takes the execution device as an argument whose default is "cuda". After every generation the
#      pipeline frees its hooks and re-installs them "to restore the state" by calling enable_model_cpu_offload() with
#      no device, so a pipeline the user offloaded to another accelerator (XPU in the report; the CPU here) is
#      re-offloaded to the default CUDA device and the next call makes its latents on CUDA while the user's generator
#      and inputs are on the chosen device. The merged fix (commit 9254d1f) records the chosen device and passes it
#      back; the changed call is marked (DL302: a hard-coded CUDA default used where the caller chose the device; the
#      closest rule).
import torch
import torch.nn as nn


class TextEncoder(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return self.embed(ids).mean(dim=1)


class UNet(nn.Module):
    def __init__(self, dim=8, channels=4):
        super().__init__()
        self.cond = nn.Linear(dim, channels)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, latents, emb):
        return self.conv(latents) + self.cond(emb)[:, :, None, None]


class OffloadHook:
    def __init__(self, module, execution_device):
        self.module = module
        self.execution_device = execution_device
        self.handle = module.register_forward_pre_hook(self.pre_forward)

    def pre_forward(self, module, args):
        module.to(self.execution_device)

    def offload(self):
        self.module.to("cpu")

    def remove(self):
        self.handle.remove()


class DiffusionPipeline:
    def __init__(self, text_encoder, unet):
        self.text_encoder = text_encoder
        self.unet = unet
        self._hooks = []
        self._exec_device = torch.device("cpu")

    @property
    def _execution_device(self):
        return self._exec_device

    def enable_model_cpu_offload(self, gpu_id=None, device="cuda"):
        torch_device = torch.device(device)
        self._offload_gpu_id = gpu_id or torch_device.index or 0
        device = torch.device(f"{torch_device.type}:{self._offload_gpu_id}")
        self._exec_device = device
        self._hooks = []
        for model in (self.text_encoder, self.unet):
            model.to("cpu")
            self._hooks.append(OffloadHook(model, device))

    def maybe_free_model_hooks(self):
        for hook in self._hooks:
            hook.offload()
            hook.remove()
        self.enable_model_cpu_offload()  # expect: DL302

    @torch.no_grad()
    def __call__(self, prompt_ids, generator=None, steps=3):
        device = self._execution_device
        emb = self.text_encoder(prompt_ids.to(device))
        latents = torch.randn((prompt_ids.shape[0], 4, 8, 8), generator=generator, device=device)
        for _ in range(steps):
            latents = latents - 0.1 * self.unet(latents, emb)
        self.maybe_free_model_hooks()
        return latents


if __name__ == "__main__":
    pipe = DiffusionPipeline(TextEncoder(), UNet())
    accel = "cuda" if torch.cuda.is_available() else "cpu"
    pipe.enable_model_cpu_offload(device=accel)
    generator = torch.Generator(device=accel).manual_seed(0)
    ids = torch.randint(0, 50, (1, 6))
    print(pipe(ids, generator=generator).shape)
    print("execution device for the next call:", pipe._execution_device)
