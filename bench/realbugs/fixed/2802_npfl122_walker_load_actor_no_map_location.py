# source: https://github.com/ufal/npfl122/pull/103
# fixed twin: load_actor passes map_location=self._device, so a GPU-saved actor loads onto the device in use.
import os
import tempfile

import torch
import torch.nn as nn


class Network:
    def __init__(self, obs_dim, act_dim, hidden_layer_size=32):
        self._device = device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

        class Actor(nn.Module):
            def __init__(self):
                super().__init__()
                self._hidden = nn.Sequential(nn.Linear(obs_dim, hidden_layer_size), nn.ReLU())
                self._mus = nn.Linear(hidden_layer_size, act_dim)
                self._sds = nn.Linear(hidden_layer_size, act_dim)
                self._log_alpha = nn.Parameter(torch.tensor(-2.3, dtype=torch.float32).to(device))

            def forward(self, inputs, sample):
                hidden = self._hidden(inputs)
                mus, sds = self._mus(hidden), torch.exp(self._sds(hidden))
                if not sample:
                    return torch.tanh(mus), None
                dist = torch.distributions.Normal(mus, sds)
                return torch.tanh(dist.rsample()), dist

        self._actor = Actor().to(device)

    def save_actor(self, path):
        torch.save(self._actor.state_dict(), path)

    def load_actor(self, path):
        self._actor.load_state_dict(torch.load(path, map_location=self._device))

    def predict_mean_actions(self, states):
        states = states.to(self._device)
        with torch.no_grad():
            return self._actor(states, sample=False)[0].cpu()


if __name__ == "__main__":
    torch.manual_seed(0)
    path = os.path.join(tempfile.mkdtemp(), "walker.model")
    trained = Network(24, 4)
    trained.save_actor(path)
    evaluator = Network(24, 4)
    evaluator.load_actor(path)
    print(evaluator.predict_mean_actions(torch.randn(2, 24)))
