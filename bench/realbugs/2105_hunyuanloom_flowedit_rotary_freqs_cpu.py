# source: https://github.com/logtd/ComfyUI-HunyuanLoom/pull/17
# error: RuntimeError: Expected all tensors to be on the same device, cuda:0 and cpu (the PR: "a mismatch cuda/cpu device error" in the FlowEdit sampler)
# bug: the FlowEdit sampler node computes the video transformer's rotary cos/sin tables with a
#      helper that builds its position grid with torch.linspace / torch.meshgrid and no device,
#      so they are CPU tensors; the node then moves the transformer and the latents to ComfyUI's
#      device and hands the tables to every transformer call. The fix (PR 17, merged, commit
#      f77ffb1) inserts freqs_cos/freqs_sin = ....to(device) right after the helper call. That
#      call is marked (the inserted lines follow it; the line they precede is unrelated offloading
#      code) with DL202 (tensors a helper makes without device= meeting the model's tensors).
import torch
import torch.nn as nn


def get_torch_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def get_meshgrid_nd(sizes):
    axes = [torch.linspace(0, n, n + 1, dtype=torch.float32)[:n] for n in sizes]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=0)


def get_rotary_pos_embed(transformer, num_frames, height, width, theta=256.0):
    sizes = [(num_frames - 1) // 4 + 1, height // 8 // 2, width // 8 // 2]
    grid = get_meshgrid_nd(sizes).reshape(3, -1)
    dim = transformer.head_dim // 3
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    angles = torch.cat([torch.outer(grid[i], freqs) for i in range(3)], dim=-1)
    angles = torch.repeat_interleave(angles, 2, dim=-1)
    return angles.cos(), angles.sin()


class VideoTransformer(nn.Module):
    def __init__(self, channels=4, head_dim=12):
        super().__init__()
        self.head_dim = head_dim
        self.patch = nn.Linear(channels * 4, head_dim)
        self.out = nn.Linear(head_dim, channels * 4)

    def forward(self, x, t, freqs_cos, freqs_sin):
        b, c, f, h, w = x.shape
        tokens = x.reshape(b, c, f, h // 2, 2, w // 2, 2).permute(0, 2, 3, 5, 1, 4, 6).reshape(b, -1, c * 4)
        q = self.patch(tokens)
        rotated = torch.stack((-q[..., 1::2], q[..., ::2]), dim=-1).flatten(-2)
        q = q * freqs_cos + rotated * freqs_sin
        out = self.out(q) * (t / 1000.0)
        return out.reshape(b, f, h // 2, w // 2, c, 2, 2).permute(0, 4, 1, 2, 5, 3, 6).reshape(b, c, f, h, w)


class HyVideoFlowEditSamplerNode:
    def process(self, model, samples, steps=4, skip_steps=1, seed=0):
        device = get_torch_device()
        transformer = model["transformer"]
        generator = torch.Generator(device="cpu").manual_seed(seed)
        latents = samples["samples"]
        _, _, latent_frames, latent_h, latent_w = latents.shape
        num_frames, height, width = (latent_frames - 1) * 4 + 1, latent_h * 8, latent_w * 8

        freqs_cos, freqs_sin = get_rotary_pos_embed(transformer, num_frames, height, width)  # expect: DL202

        if model["manual_offloading"]:
            transformer.to(device)
        x_init = latents.to(device)
        timesteps = torch.linspace(1000, 0, steps + 1, device=device)
        x_tgt = x_init
        with torch.no_grad():
            for idx, (t, t_prev) in enumerate(zip(timesteps[:-1], timesteps[1:])):
                if idx < skip_steps:
                    continue
                noise = torch.randn(x_init.shape, generator=generator).to(x_init.device)
                z_src = (1 - t / 1000) * x_init + (t / 1000) * noise
                z_tgt = x_tgt + z_src - x_init
                v_src = transformer(z_src, t, freqs_cos=freqs_cos, freqs_sin=freqs_sin)
                v_tgt = transformer(z_tgt, t, freqs_cos=freqs_cos, freqs_sin=freqs_sin)
                x_tgt = x_tgt + (t_prev - t) / 1000 * (v_tgt - v_src)
        return ({"samples": x_tgt.cpu()},)


if __name__ == "__main__":
    hy_model = {"transformer": VideoTransformer(), "manual_offloading": True}
    out = HyVideoFlowEditSamplerNode().process(hy_model, {"samples": torch.randn(1, 4, 3, 8, 8)})
    print(out[0]["samples"].shape)
