# source: https://github.com/huggingface/deep-rl-class/issues/56
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
#        (when checking argument for argument mat1 in method wrapper_addmm) (Unit 5's "debug_policy.act(env.reset())")
# bug: the unit picks device = cuda:0 when a GPU is available, and Policy.act moves each state to that device
#      (torch.from_numpy(state).float().unsqueeze(0).to(device)) before calling forward. The unit's debugging cell
#      builds debug_policy = Policy(s_size, a_size, 64) without moving it, so on a GPU machine the CPU network's fc1
#      meets the GPU state. (The cell is meant to show another, intended mistake - np.argmax on the Categorical - so the
#      reporter saw a different error than the text announced.) The unit's code in the index (and its translations)
#      builds the debugging policy with Policy(s_size, a_size, 64).to(device); the line that fix changed is marked
#      (DL201, the closest rule: a module called on an argument on another device; the module is the one left on the
#      CPU). gym's CartPole is replaced by a random state list (torch.tensor stands in for torch.from_numpy); act samples
#      from the Categorical (the unit's "real solution") instead of the intended np.argmax mistake.
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Policy(nn.Module):
    def __init__(self, s_size, a_size, h_size):
        super(Policy, self).__init__()
        self.fc1 = nn.Linear(s_size, h_size)
        self.fc2 = nn.Linear(h_size, a_size)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return F.softmax(x, dim=1)

    def act(self, state):
        state = torch.tensor(state).float().unsqueeze(0).to(device)
        probs = self.forward(state).cpu()
        m = Categorical(probs)
        action = m.sample()
        return action.item(), m.log_prob(action)


class CartPoleStandIn:
    observation_size, action_size = 4, 2

    def reset(self):
        return [random.uniform(-0.05, 0.05) for _ in range(self.observation_size)]


if __name__ == "__main__":
    env = CartPoleStandIn()
    s_size = env.observation_size
    a_size = env.action_size
    debug_policy = Policy(s_size, a_size, 64)  # expect: DL201
    print(debug_policy.act(env.reset()))
