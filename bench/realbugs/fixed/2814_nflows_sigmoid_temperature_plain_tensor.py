# source: https://github.com/bayesiains/nflows/pull/48
# fixed twin: the fixed temperature is registered as a buffer, so flow.to(device) moves it with the parameters.
import torch
from torch import nn
from torch.nn import functional as F


def sum_except_batch(x, num_batch_dims=1):
    return torch.sum(x, dim=list(range(num_batch_dims, x.ndimension())))


class Transform(nn.Module):
    def forward(self, inputs, context=None):
        raise NotImplementedError

    def inverse(self, inputs, context=None):
        raise NotImplementedError


class Sigmoid(Transform):
    def __init__(self, temperature=1, eps=1e-6, learn_temperature=False):
        super().__init__()
        self.eps = eps
        if learn_temperature:
            self.temperature = nn.Parameter(torch.Tensor([temperature]))
        else:
            self.register_buffer("temperature", torch.Tensor([temperature]))

    def forward(self, inputs, context=None):
        inputs = self.temperature * inputs
        outputs = torch.sigmoid(inputs)
        logabsdet = sum_except_batch(torch.log(self.temperature) - F.softplus(-inputs) - F.softplus(inputs))
        return outputs, logabsdet


class AffineTransform(Transform):
    def __init__(self, features):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(features))
        self.shift = nn.Parameter(torch.zeros(features))

    def forward(self, inputs, context=None):
        outputs = inputs * torch.exp(self.log_scale) + self.shift
        return outputs, self.log_scale.sum().expand(inputs.shape[0])


class CompositeTransform(Transform):
    def __init__(self, transforms):
        super().__init__()
        self._transforms = nn.ModuleList(transforms)

    def forward(self, inputs, context=None):
        total_logabsdet = inputs.new_zeros(inputs.shape[0])
        for transform in self._transforms:
            inputs, logabsdet = transform(inputs, context)
            total_logabsdet = total_logabsdet + logabsdet
        return inputs, total_logabsdet


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    flow = CompositeTransform([AffineTransform(4), Sigmoid(temperature=2.0)]).to(device)
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
    x = torch.randn(16, 4).to(device)
    outputs, logabsdet = flow(x)
    loss = -logabsdet.mean()
    loss.backward()
    optimizer.step()
    print(loss.item())
