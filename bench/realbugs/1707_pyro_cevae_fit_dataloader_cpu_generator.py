# source: https://github.com/pyro-ppl/pyro/pull/3264
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu' (in the sampler's torch.randperm, first batch of CEVAE.fit)
# bug: the causal-effect VAE's fit() wraps the training tensors in a shuffling DataLoader
#      without a generator. When the caller runs on a GPU with CUDA as the default device (the
#      example script does that under --cuda), the sampler's randperm is made on the GPU while
#      the DataLoader's default generator is a CPU one, and the first batch fails. The fix (PR
#      3264, commit 1048a8b) passes generator=torch.Generator(device=x.device) to the
#      DataLoader; that line is marked (DL208: a random generator used to draw on another
#      device than its own - the closest rule, since the generator here is the DataLoader's
#      implicit default one).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class PreWhitener(nn.Module):
    def __init__(self, data):
        super().__init__()
        with torch.no_grad():
            self.loc = data.mean(0)
            self.inv_scale = data.std(0).clamp(min=1e-6).reciprocal()

    def forward(self, data):
        return (data - self.loc) * self.inv_scale


class CEVAE(nn.Module):
    def __init__(self, feature_dim, latent_dim=4):
        super().__init__()
        self.feature_dim = feature_dim
        self.encoder = nn.Linear(feature_dim + 2, 2 * latent_dim)
        self.decoder = nn.Linear(latent_dim + 1, feature_dim + 1)

    def loss(self, x, t, y):
        loc, log_scale = self.encoder(torch.cat([x, t[:, None], y[:, None]], -1)).chunk(2, -1)
        z = loc + log_scale.exp() * torch.randn_like(loc)
        recon = self.decoder(torch.cat([z, t[:, None]], -1))
        kl = 0.5 * (loc.pow(2) + (2 * log_scale).exp() - 2 * log_scale - 1).sum(-1)
        return ((recon[:, :-1] - x).pow(2).sum(-1) + (recon[:, -1] - y).pow(2) + kl).mean()

    def fit(self, x, t, y, num_epochs=3, batch_size=16, learning_rate=1e-3):
        assert x.dim() == 2 and x.size(-1) == self.feature_dim
        self.whiten = PreWhitener(x)
        dataset = TensorDataset(x, t, y)
        dataloader = DataLoader(dataset, batch_size=batch_size, shuffle=True)  # expect: DL208
        optim = torch.optim.Adam(self.parameters(), lr=learning_rate)
        losses = []
        for epoch in range(num_epochs):
            for xb, tb, yb in dataloader:
                loss = self.loss(self.whiten(xb), tb, yb)
                optim.zero_grad()
                loss.backward()
                optim.step()
                losses.append(loss.item())
        return losses


def main(cuda=torch.cuda.is_available()):
    if cuda:
        torch.set_default_device("cuda")
    n, d = 64, 5
    x = torch.randn(n, d)
    t = torch.bernoulli(torch.full((n,), 0.5))
    y = x[:, 0] + 2 * t + 0.1 * torch.randn(n)
    model = CEVAE(d)
    losses = model.fit(x, t, y)
    print(len(losses), round(losses[-1], 3))


if __name__ == "__main__":
    main()
