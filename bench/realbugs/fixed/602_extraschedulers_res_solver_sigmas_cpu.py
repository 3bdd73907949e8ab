# source: https://github.com/DenOfEquity/webUI_ExtraSchedulers/pull/3
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the refined-exponential sampler moves its stochasticity tensor ita to the latents' device but
#      not the noise schedule; the host (Forge) hands the sigmas over on the CPU, so each step's
#      1-element sigma slice (a 1-dim CPU tensor, not a 0-dim one) meets the CUDA ita. The fix also
#      moves the sigmas to the latents' device (inserted after the ita move, marked there). The PR's
#      extra .to(device) on the noise is a no-op (randn_like already follows x) and is not marked.
import torch
import torch.nn as nn


def default_noise_sampler(x):
    return lambda sigma, sigma_next: torch.randn_like(x)


def pairwise(items):
    return zip(items[:-1], items[1:])


def refined_exp_step(model, x, sigma, sigma_next):
    denoised = model(x, sigma)
    lam, lam_next = -sigma.log(), -sigma_next.log()
    h = lam_next - lam
    return x * (sigma_next / sigma) - denoised * torch.expm1(-h), denoised


def sample_refined_exp_s(model, x, sigmas, ita=torch.zeros((1,)), denoise_to_zero=True):
    noise_sampler = default_noise_sampler(x)
    device = x.device
    ita = ita.to(device)
    sigmas = sigmas.to(device)
    for sigma, sigma_next in pairwise(sigmas[:-1].split(1)):
        eps = noise_sampler(sigma, sigma_next).float().to(device)
        sigma_hat = sigma * (1 + ita)
        x_hat = x + (sigma_hat ** 2 - sigma ** 2).sqrt() * eps
        x, _ = refined_exp_step(model, x_hat, sigma_hat, sigma_next)
    if denoise_to_zero:
        x = model(x, sigmas[-2:-1].to(x.device))
    return x


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x, sigma):
        return self.net(x) / (1 + sigma.reshape(-1, 1, 1, 1).to(x.device))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Denoiser().to(device)
    sigmas = torch.exp(torch.linspace(2.0, -3.0, 8))
    x = torch.randn(1, 4, 16, 16, device=device) * sigmas[0]
    with torch.no_grad():
        print(sample_refined_exp_s(model, x, sigmas, ita=torch.Tensor((0.25,))).shape)
