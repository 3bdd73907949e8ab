# source: https://github.com/bayesiains/nflows/issues/8
# fixed twin: the noise is drawn on the means' device, as the maintainer's fix does.
import math

import torch
import torch.nn as nn


class ConditionalDiagonalNormal(nn.Module):
    def __init__(self, shape, context_encoder):
        super().__init__()
        self._shape = torch.Size(shape)
        self._context_encoder = context_encoder
        self.register_buffer("_log_z", torch.tensor(0.5 * math.prod(shape) * math.log(2 * math.pi)), persistent=False)

    def _compute_params(self, context):
        params = self._context_encoder(context)
        split = params.shape[-1] // 2
        means = params[..., :split].reshape(params.shape[0], *self._shape)
        log_stds = params[..., split:].reshape(params.shape[0], *self._shape)
        return means, log_stds

    def log_prob(self, inputs, context):
        means, log_stds = self._compute_params(context)
        norm_inputs = (inputs - means) * torch.exp(-log_stds)
        log_prob = -0.5 * norm_inputs.pow(2).flatten(1).sum(1)
        return log_prob - log_stds.flatten(1).sum(1) - self._log_z

    def sample(self, num_samples, context):
        means, log_stds = self._compute_params(context)
        batch_size = means.shape[0]
        noise = torch.randn(batch_size * num_samples, *self._shape, device=means.device)
        noise = noise.reshape(batch_size, num_samples, *self._shape)
        means = means.unsqueeze(1)
        log_stds = log_stds.unsqueeze(1)
        return means + torch.exp(log_stds) * noise


class ConditionalFlow(nn.Module):
    def __init__(self, features=3, context_features=4):
        super().__init__()
        self.base = ConditionalDiagonalNormal([features], nn.Linear(context_features, 2 * features))
        self.shift = nn.Parameter(torch.zeros(features))

    def log_prob(self, inputs, context):
        return self.base.log_prob(inputs - self.shift, context)

    def sample(self, num_samples, context):
        return self.base.sample(num_samples, context) + self.shift


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    flow = ConditionalFlow().to(device)
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
    for _ in range(3):
        x, c = torch.randn(16, 3, device=device), torch.randn(16, 4, device=device)
        loss = -flow.log_prob(x, c).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        print(flow.sample(5, torch.randn(2, 4, device=device)).shape)
