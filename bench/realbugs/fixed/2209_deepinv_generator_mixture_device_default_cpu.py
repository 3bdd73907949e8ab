# source: https://github.com/deepinv/deepinv/issues/1090
# fixed twin: the mixture takes its device from the rng it is given (or the generators it mixes) instead of the CPU default (PR 1093).
#      device than the one it draws on).
import torch
import torch.nn as nn


class PhysicsGenerator(nn.Module):
    def __init__(self, device="cpu", dtype=torch.float32, rng=None):
        super().__init__()
        self.device = torch.device(device)
        self.dtype = dtype
        if rng is None:
            self.rng = torch.Generator(device=self.device)
        else:
            if rng.device.type != self.device.type:
                raise ValueError(f"The random generator is on {rng.device}, the physics generator on {self.device}.")
            self.rng = rng

    def step(self, batch_size=1):
        raise NotImplementedError


class SigmaGenerator(PhysicsGenerator):
    def __init__(self, sigma_min=0.01, sigma_max=0.5, device="cpu", rng=None):
        super().__init__(device=device, rng=rng)
        self.sigma_min, self.sigma_max = sigma_min, sigma_max

    def step(self, batch_size=1):
        u = torch.rand(batch_size, generator=self.rng, device=self.device)
        return {"sigma": self.sigma_min + u * (self.sigma_max - self.sigma_min)}


class GeneratorMixture(PhysicsGenerator):
    def __init__(self, generators, probs, rng=None):
        device = rng.device if rng is not None else generators[0].device
        super().__init__(device=device, rng=rng)
        self.generators = generators
        self.probs = torch.tensor(probs)
        self.cum_probs = torch.cumsum(self.probs, dim=0)

    def step(self, batch_size=1):
        p = torch.rand(1, generator=self.rng, device=self.device)
        idx = int(torch.searchsorted(self.cum_probs.to(p.device), p))
        return self.generators[idx].step(batch_size)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rng = torch.Generator(device=device).manual_seed(0)
    low = SigmaGenerator(0.01, 0.05, device=device, rng=rng)
    high = SigmaGenerator(0.1, 0.5, device=device, rng=rng)
    mixture = GeneratorMixture([low, high], [0.5, 0.5], rng=rng)
    print(mixture.step(batch_size=4))
