# source: https://github.com/huggingface/deep-rl-class/issues/56
# fixed twin: the unit's code (in the index, with its translations) builds the debugging policy with
#             Policy(s_size, a_size, 64).to(device), on the device act moves the states to.
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
    debug_policy = Policy(s_size, a_size, 64).to(device)
    print(debug_policy.act(env.reset()))
