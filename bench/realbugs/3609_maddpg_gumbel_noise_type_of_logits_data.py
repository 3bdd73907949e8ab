# source: https://github.com/shariqiqbal2810/maddpg-pytorch/issues/28
# error: RuntimeError: expected device cuda:0 but got device cpu
#        (maddpg.update -> gumbel_softmax(curr_pol_out, hard=True) -> utils/misc.py line 73 in gumbel_softmax_sample)
# bug: with USE_CUDA and --discrete_action, MADDPG.prep_training(device='gpu') moves the policies with .cuda() and
#      the replay buffer casts the sample to the GPU, so curr_pol_out is a CUDA tensor. gumbel_softmax_sample draws
#      its noise through sample_gumbel(logits.shape, tens_type=type(logits.data)), meant to build the noise with the
#      logits' tensor type; from PyTorch 0.4 type() of any tensor is torch.Tensor (shown in the forum thread "Python
#      builtin type() difference in pytorch 0.4 and 0.3.1", discuss.pytorch.org/t/19391), so tens_type(*shape) makes
#      a CPU tensor and logits + noise mixes devices. The maintainer: "make sure that the sampled variable is on the
#      same device as the logits ... infer the device from the logits"; the code is unchanged at the head (no fix).
#      The line of the traceback is marked (DL201; the noise factory in sample_gumbel is where the device should be
#      given). Reductions: one agent, whose DDPGAgent (utils/agents.py) keeps only the policy and critic MLPs and the
#      policy optimizer, the critic update and target networks cut; MADDPG.__init__ builds its agent list from
#      agent_init_params as upstream, the driver passing that list directly instead of MADDPG.init_from_env(env)
#      (alg_types, gamma and tau dropped); ReplayBuffer.sample keeps its to_gpu cast over random NumPy observations;
#      USE_CUDA takes main.py's commented alternative, torch.cuda.is_available(), where the reporter set True. NumPy
#      is imported as upstream (absent here), so the file does not run on this machine.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torch.autograd import Variable


# --- utils/misc.py ---
def onehot_from_logits(logits, eps=0.0):
    argmax_acs = (logits == logits.max(1, keepdim=True)[0]).float()
    if eps == 0.0:
        return argmax_acs


def sample_gumbel(shape, eps=1e-20, tens_type=torch.FloatTensor):
    """Sample from Gumbel(0, 1)"""
    U = Variable(tens_type(*shape).uniform_(), requires_grad=False)
    return -torch.log(-torch.log(U + eps) + eps)


def gumbel_softmax_sample(logits, temperature):
    """ Draw a sample from the Gumbel-Softmax distribution"""
    y = logits + sample_gumbel(logits.shape, tens_type=type(logits.data))  # expect: DL201
    return F.softmax(y / temperature, dim=1)


def gumbel_softmax(logits, temperature=1.0, hard=False):
    y = gumbel_softmax_sample(logits, temperature)
    if hard:
        y_hard = onehot_from_logits(y)
        y = (y_hard - y).detach() + y
    return y


# --- utils/buffer.py ---
class ReplayBuffer(object):
    def __init__(self, obs_dim, filled_i=64):
        self.obs_buff = np.random.randn(filled_i, obs_dim).astype(np.float32)
        self.filled_i = filled_i

    def sample(self, N, to_gpu=False):
        inds = np.random.choice(np.arange(self.filled_i), size=N, replace=False)
        if to_gpu:
            cast = lambda x: Variable(Tensor(x), requires_grad=False).cuda()
        else:
            cast = lambda x: Variable(Tensor(x), requires_grad=False)
        return [cast(self.obs_buff[inds])]


# --- utils/agents.py ---
class DDPGAgent(object):
    def __init__(self, num_in_pol, num_out_pol, num_in_critic, hidden_dim=64, lr=0.01):
        self.policy = nn.Sequential(nn.Linear(num_in_pol, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, num_out_pol))
        self.critic = nn.Sequential(nn.Linear(num_in_critic, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 1))
        self.policy_optimizer = torch.optim.Adam(self.policy.parameters(), lr=lr)


# --- algorithms/maddpg.py ---
class MADDPG(object):
    def __init__(self, agent_init_params, lr=0.01, hidden_dim=64, discrete_action=True):
        self.agents = [DDPGAgent(lr=lr, hidden_dim=hidden_dim, **params) for params in agent_init_params]
        self.agent_init_params = agent_init_params
        self.lr = lr
        self.discrete_action = discrete_action
        self.pol_dev = 'cpu'
        self.critic_dev = 'cpu'

    def update(self, sample, agent_i):
        obs = sample
        curr_agent = self.agents[agent_i]
        curr_agent.policy_optimizer.zero_grad()
        if self.discrete_action:
            curr_pol_out = curr_agent.policy(obs[agent_i])
            curr_pol_vf_in = gumbel_softmax(curr_pol_out, hard=True)
        else:
            curr_pol_out = curr_agent.policy(obs[agent_i])
            curr_pol_vf_in = curr_pol_out
        vf_in = torch.cat((obs[agent_i], curr_pol_vf_in), dim=1)
        pol_loss = -curr_agent.critic(vf_in).mean()
        pol_loss += (curr_pol_out**2).mean() * 1e-3
        pol_loss.backward()
        curr_agent.policy_optimizer.step()

    def prep_training(self, device='gpu'):
        if device == 'gpu':
            fn = lambda x: x.cuda()
        else:
            fn = lambda x: x.cpu()
        if not self.pol_dev == device:
            for a in self.agents:
                a.policy = fn(a.policy)
            self.pol_dev = device
        if not self.critic_dev == device:
            for a in self.agents:
                a.critic = fn(a.critic)
            self.critic_dev = device


# --- main.py (python main.py simple_tag test --discrete_action) ---
USE_CUDA = torch.cuda.is_available()

if __name__ == "__main__":
    maddpg = MADDPG(agent_init_params=[dict(num_in_pol=16, num_out_pol=5, num_in_critic=21)])
    replay_buffer = ReplayBuffer(obs_dim=16)
    if USE_CUDA:
        maddpg.prep_training(device='gpu')
    else:
        maddpg.prep_training(device='cpu')
    sample = replay_buffer.sample(32, to_gpu=USE_CUDA)
    maddpg.update(sample, 0)
    print("updated")
