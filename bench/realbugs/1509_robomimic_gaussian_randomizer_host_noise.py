# source: https://github.com/ARISE-Initiative/robomimic/pull/124
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (noise drawn on the host added to CUDA observations)
# bug: the observation randomizer base class calls the subclass's _forward_in on raw observations
#      while training; the Gaussian-noise randomizer repeats the batch, then draws its noise with
#      torch.rand(size=out.shape) and no device, so with the policy and its observations on the GPU
#      the host noise meets CUDA inputs. The merged PR (commit bdc89f7) appends .to(inputs.device);
#      the changed line is marked (DL202: a factory without device= meeting a tensor argument).
import abc

import torch
import torch.nn as nn


def repeat_by_expand_at(x, repeats, dim=0):
    x = x.unsqueeze(dim + 1)
    shape = list(x.shape)
    shape[dim + 1] = repeats
    return x.expand(*shape).reshape(-1, *x.shape[dim + 2:])


class Randomizer(nn.Module):
    def forward_in(self, inputs):
        if self.training:
            return self._forward_in(inputs=inputs)
        return inputs

    def forward_out(self, inputs):
        if self.training:
            return self._forward_out(inputs)
        return inputs

    @abc.abstractmethod
    def _forward_in(self, inputs):
        raise NotImplementedError

    @abc.abstractmethod
    def _forward_out(self, inputs):
        raise NotImplementedError


class GaussianNoiseRandomizer(Randomizer):
    def __init__(self, input_shape, noise_mean=0.0, noise_std=0.3, limits=None, num_samples=1):
        super().__init__()
        self.input_shape = input_shape
        self.noise_mean, self.noise_std = noise_mean, noise_std
        self.limits, self.num_samples = limits, num_samples

    def _forward_in(self, inputs):
        out = repeat_by_expand_at(inputs, repeats=self.num_samples, dim=0)
        out = torch.rand(size=out.shape) * self.noise_std + self.noise_mean + out  # expect: DL202
        if self.limits is not None:
            out = torch.clip(out, min=self.limits[0], max=self.limits[1])
        return out

    def _forward_out(self, inputs):
        batch_size = inputs.shape[0] // self.num_samples
        return inputs.reshape(batch_size, self.num_samples, *inputs.shape[1:]).mean(dim=1)


class ObservationEncoder(nn.Module):
    def __init__(self, obs_dim, feat_dim, randomizer):
        super().__init__()
        self.randomizer = randomizer
        self.net = nn.Sequential(nn.Linear(obs_dim, feat_dim), nn.ReLU())

    def forward(self, obs):
        x = self.randomizer.forward_in(obs)
        return self.randomizer.forward_out(self.net(x))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    encoder = ObservationEncoder(7, 16, GaussianNoiseRandomizer((7,), limits=(-1.0, 1.0), num_samples=3))
    encoder.to(device).train()
    obs = torch.randn(4, 7).to(device)
    print(encoder(obs).shape)
