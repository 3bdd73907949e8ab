# source: https://github.com/PaddlePaddle/PARL/pull/646
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the framework's torch Agent.restore loads a saved state dict with torch.load and no
#      map_location, and gives the caller no way to pass one, so a policy trained and saved on the GPU
#      cannot be restored for evaluation on a CPU-only machine. The fix (commit ffa93b1) adds a
#      map_location parameter, passes it to torch.load and documents restoring on the CPU (DL301).
import os
import sys
import tempfile

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, obs_dim=4, act_dim=2):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, act_dim))

    def forward(self, obs):
        return self.fc(obs)


class Algorithm:
    def __init__(self, model):
        self.model = model


class Agent:
    def __init__(self, algorithm):
        self.alg = algorithm

    def save(self, save_path, model=None):
        if model is None:
            model = self.alg.model
        dirname = os.path.dirname(save_path)
        if not os.path.exists(dirname):
            os.makedirs(dirname)
        torch.save(model.state_dict(), save_path)

    def restore(self, save_path, model=None):
        if model is None:
            model = self.alg.model
        checkpoint = torch.load(save_path)  # expect: DL301
        model.load_state_dict(checkpoint)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "ckpt", "model.ckpt")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not os.path.exists(path):
        trained = Agent(Algorithm(Model().to(device)))
        trained.save(path)
    agent = Agent(Algorithm(Model()))
    agent.restore(path)
    print(agent.alg.model(torch.randn(1, 4)))
