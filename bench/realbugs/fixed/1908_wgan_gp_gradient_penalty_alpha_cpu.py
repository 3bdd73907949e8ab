# source: https://github.com/aladdinpersson/Machine-Learning-Collection/issues/58
# fixed twin: alpha is moved to the given device (.to(device) appended), as the stored utils.py has it.
import torch
import torch.nn as nn

Z_DIM, CHANNELS, IMG = 8, 1, 16
LAMBDA_GP = 10


def gradient_penalty(critic, real, fake, device="cpu"):
    BATCH_SIZE, C, H, W = real.shape
    alpha = torch.rand((BATCH_SIZE, 1, 1, 1)).repeat(1, C, H, W).to(device)
    interpolated_images = real * alpha + fake * (1 - alpha)
    mixed_scores = critic(interpolated_images)
    gradient = torch.autograd.grad(
        inputs=interpolated_images,
        outputs=mixed_scores,
        grad_outputs=torch.ones_like(mixed_scores),
        create_graph=True,
        retain_graph=True,
    )[0]
    gradient = gradient.view(gradient.shape[0], -1)
    gradient_norm = gradient.norm(2, dim=1)
    return torch.mean((gradient_norm - 1) ** 2)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(CHANNELS, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(8 * 8 * 8, 1))

    def forward(self, x):
        return self.net(x)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(Z_DIM, CHANNELS * IMG * IMG), nn.Tanh())

    def forward(self, z):
        return self.net(z).view(-1, CHANNELS, IMG, IMG)


def train(loader, device):
    gen, critic = Generator().to(device), Critic().to(device)
    opt_gen = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.0, 0.9))
    opt_critic = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
    for real in loader:
        real = real.to(device)
        cur_batch_size = real.shape[0]
        noise = torch.randn(cur_batch_size, Z_DIM, 1, 1).to(device)
        fake = gen(noise)
        critic_real = critic(real).reshape(-1)
        critic_fake = critic(fake.detach()).reshape(-1)
        gp = gradient_penalty(critic, real, fake, device=device)
        loss_critic = -(torch.mean(critic_real) - torch.mean(critic_fake)) + LAMBDA_GP * gp
        opt_critic.zero_grad()
        loss_critic.backward(retain_graph=True)
        opt_critic.step()
        loss_gen = -torch.mean(critic(fake).reshape(-1))
        opt_gen.zero_grad()
        loss_gen.backward()
        opt_gen.step()
    return loss_critic.item(), loss_gen.item()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(train([torch.rand(4, CHANNELS, IMG, IMG) * 2 - 1 for _ in range(3)], device))
