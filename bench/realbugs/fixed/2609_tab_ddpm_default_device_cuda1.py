# source: https://github.com/yandex-research/tab-ddpm/issues/20
# fixed twin: the scripts name the first GPU, torch.device('cuda:0'), wherever they named 'cuda:1' (the change reported in the issue), so a one-GPU machine can run them.
from copy import deepcopy

import torch
import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, d_in):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in + 1, 32), nn.SiLU(), nn.Linear(32, d_in))

    def forward(self, x, t):
        return self.net(torch.cat([x, t[:, None].float() / 1000], dim=1))


class GaussianDiffusion(nn.Module):
    def __init__(self, denoise_fn, num_timesteps=1000, device=torch.device('cpu')):
        super().__init__()
        self._denoise_fn = denoise_fn
        self.num_timesteps = num_timesteps
        self.register_buffer('alphas_cumprod', torch.linspace(0.999, 0.01, num_timesteps))

    def mixed_loss(self, x, out_dict):
        t = torch.randint(0, self.num_timesteps, (x.shape[0],), device=x.device)
        noise = torch.randn_like(x)
        a = self.alphas_cumprod[t][:, None]
        x_t = a.sqrt() * x + (1 - a).sqrt() * noise
        return torch.zeros((), device=x.device), ((self._denoise_fn(x_t, t) - noise) ** 2).mean()


class Trainer:
    def __init__(self, diffusion, train_iter, lr, weight_decay, steps, device=torch.device('cuda:0')):
        self.diffusion = diffusion
        self.ema_model = deepcopy(self.diffusion._denoise_fn)
        for param in self.ema_model.parameters():
            param.detach_()
        self.train_iter = train_iter
        self.steps = steps
        self.optimizer = torch.optim.AdamW(self.diffusion.parameters(), lr=lr, weight_decay=weight_decay)
        self.device = device

    def _run_step(self, x, out_dict):
        x = x.to(self.device)
        for k in out_dict:
            out_dict[k] = out_dict[k].long().to(self.device)
        self.optimizer.zero_grad()
        loss_multi, loss_gauss = self.diffusion.mixed_loss(x, out_dict)
        loss = loss_multi + loss_gauss
        loss.backward()
        self.optimizer.step()
        return loss_multi, loss_gauss

    def run_loop(self):
        for step in range(self.steps):
            x, y = next(self.train_iter)
            loss_multi, loss_gauss = self._run_step(x, {'y': y})
        return (loss_multi + loss_gauss).item()


def train(steps=20, lr=0.002, weight_decay=1e-4, batch_size=64, num_timesteps=1000,
          num_numerical_features=4, device=torch.device('cuda:0')):
    data = torch.randn(512, num_numerical_features)
    labels = torch.randint(0, 2, (512,))

    def loader():
        while True:
            idx = torch.randint(0, 512, (batch_size,))
            yield data[idx], labels[idx]

    model = Denoiser(num_numerical_features)
    model.to(device)
    diffusion = GaussianDiffusion(model, num_timesteps=num_timesteps, device=device)
    diffusion.to(device)
    diffusion.train()
    trainer = Trainer(diffusion, loader(), lr=lr, weight_decay=weight_decay, steps=steps, device=device)
    return trainer.run_loop()


if __name__ == '__main__':
    raw_config = {'train': {'main': {'steps': 20, 'lr': 0.002}}, 'num_numerical_features': 4}
    if not torch.cuda.is_available():
        raw_config['device'] = 'cpu'
    if 'device' in raw_config:
        device = torch.device(raw_config['device'])
    else:
        device = torch.device('cuda:0')
    print(train(**raw_config['train']['main'], num_numerical_features=raw_config['num_numerical_features'],
                device=device))
