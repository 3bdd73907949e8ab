# source: https://github.com/floracharbo/MARL_local_electricity/pull/65
# error: TypeError: can't convert cuda:0 device type tensor to numpy
# bug: the episode buffer's update() stores each transition value by first turning it into a numpy
#      array (to get NaN for None) and then back into a tensor on the buffer's device; once the agents
#      produce their actions as CUDA tensors, np.array(v) fails. The fix stops the numpy round trip.
import numpy as np
import torch as th


class EpisodeBatch:
    def __init__(self, scheme, batch_size, max_seq_length, device="cpu"):
        self.scheme = scheme
        self.device = device
        self.data = {
            k: th.zeros((batch_size, max_seq_length, *v["vshape"]), dtype=v.get("dtype", th.float32), device=device)
            for k, v in scheme.items()
        }

    def update(self, data, bs=slice(None), ts=slice(None)):
        for k, v in data.items():
            if k not in self.data:
                raise KeyError(f"{k} not found in transition or episode data")
            target = self.data[k]
            dtype = self.scheme[k].get("dtype", th.float32)
            v = np.array(v, dtype=float)  # expect: DL204
            v = th.tensor(v, dtype=dtype, device=self.device)
            target[bs, ts] = v.view_as(target[bs, ts])


class Controller:
    def __init__(self, n_agents, obs_dim, n_actions, device):
        self.device = device
        self.policy = th.nn.Linear(obs_dim, n_actions).to(device)

    def select_actions(self, obs):
        return self.policy(obs.to(self.device)).detach()


if __name__ == "__main__":
    device = "cuda" if th.cuda.is_available() else "cpu"
    scheme = {"state": {"vshape": (3, 4)}, "actions": {"vshape": (3, 2)}}
    batch = EpisodeBatch(scheme, batch_size=1, max_seq_length=24, device=device)
    mac = Controller(n_agents=3, obs_dim=4, n_actions=2, device=device)
    for t in range(24):
        state = th.rand(1, 3, 4)
        batch.update({"state": state}, ts=t)
        actions = mac.select_actions(state)
        batch.update({"actions": actions}, ts=t)
