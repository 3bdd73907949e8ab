# source: https://github.com/CompVis/stable-diffusion/pull/142
# fixed twin: the loader returns the model without moving it, and main calls eval() after model.to(device), as the PR describes.
import os
import tempfile

import torch
import torch.nn as nn


class TinyLatentDiffusion(nn.Module):
    def __init__(self, channels=4, cond_dim=8):
        super().__init__()
        self.cond_stage_model = nn.Embedding(16, cond_dim)
        self.unet = nn.Conv2d(channels, channels, 3, padding=1)
        self.cond_proj = nn.Linear(cond_dim, channels)

    def get_learned_conditioning(self, tokens):
        return self.cond_stage_model(tokens).mean(1)

    def apply_model(self, x, cond):
        return self.unet(x) + self.cond_proj(cond)[:, :, None, None]


def instantiate_from_config(config):
    return TinyLatentDiffusion(**config.get("params", {}))


def load_model_from_config(config, ckpt, verbose=False):
    print(f"Loading model from {ckpt}")
    pl_sd = torch.load(ckpt, map_location="cpu")
    if "global_step" in pl_sd:
        print(f"Global Step: {pl_sd['global_step']}")
    sd = pl_sd["state_dict"]
    model = instantiate_from_config(config["model"])
    m, u = model.load_state_dict(sd, strict=False)
    if verbose and (m or u):
        print("missing:", m, "unexpected:", u)
    return model


class DDIMSampler:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def sample(self, steps, cond, shape):
        device = next(self.model.parameters()).device
        x = torch.randn(cond.shape[0], *shape, device=device)
        for _ in range(steps):
            x = x - 0.1 * self.model.apply_model(x, cond)
        return x


def main(ckpt):
    config = {"model": {"params": {"channels": 4}}}
    model = load_model_from_config(config, ckpt)
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    model = model.to(device)
    model.eval()
    sampler = DDIMSampler(model)
    tokens = torch.randint(0, 16, (2, 5), device=device)
    c = model.get_learned_conditioning(tokens)
    samples = sampler.sample(3, c, (4, 8, 8))
    print(samples.shape, samples.device)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    torch.save({"global_step": 1, "state_dict": TinyLatentDiffusion().state_dict()}, path)
    main(path)
