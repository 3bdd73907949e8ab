# source: https://github.com/thesouther/MARL/issues/2
# error: RuntimeError: Tensor for 'out' is on CPU, Tensor for argument #1 'self' is on CPU, but expected them to be on GPU
#        (while checking arguments for addmm), raised in the GRU cell of the agent network called from choose_action
# bug: the QMIX policy moves its recurrent agent network to conf.device, but init_hidden makes the per-agent hidden
#      state with torch.zeros and no device. The learner moves the hidden state before each use, but the rollout's
#      choose_action slices the CPU hidden state and hands it straight to the GPU network. The issue is open with no
#      answer and no upstream fix (so no twin); the cause is read from the repository. The marker is on the network
#      call the traceback points to (DL201: a module on the GPU called on a CPU hidden state).
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conf:
    def __init__(self):
        self.cuda = torch.cuda.is_available()
        self.device = torch.device("cuda" if self.cuda else "cpu")
        self.n_actions, self.n_agents, self.obs_shape = 5, 3, 8
        self.drqn_hidden_dim = 16


class DRQN(nn.Module):
    def __init__(self, input_shape, conf):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, conf.drqn_hidden_dim)
        self.rnn = nn.GRUCell(conf.drqn_hidden_dim, conf.drqn_hidden_dim)
        self.fc2 = nn.Linear(conf.drqn_hidden_dim, conf.n_actions)
        self.hidden_dim = conf.drqn_hidden_dim

    def forward(self, obs, hidden_state):
        x = F.relu(self.fc1(obs))
        h_in = hidden_state.reshape(-1, self.hidden_dim)
        h = self.rnn(x, h_in)
        return self.fc2(h), h


class QMIX:
    def __init__(self, conf):
        self.conf = conf
        self.device = conf.device
        input_shape = conf.obs_shape + conf.n_agents
        self.eval_drqn_net = DRQN(input_shape, conf).to(self.device)
        self.eval_hidden = None

    def init_hidden(self, episode_num):
        self.eval_hidden = torch.zeros((episode_num, self.conf.n_agents, self.conf.drqn_hidden_dim))

    def get_q_values(self, inputs):
        self.eval_hidden = self.eval_hidden.to(self.device)
        q, self.eval_hidden = self.eval_drqn_net(inputs.to(self.device), self.eval_hidden)
        return q


class Agents:
    def __init__(self, conf):
        self.conf = conf
        self.device = conf.device
        self.n_agents = conf.n_agents
        self.policy = QMIX(conf)

    def choose_action(self, obs, agent_num, epsilon=0.0):
        agent_id = torch.zeros(self.n_agents)
        agent_id[agent_num] = 1.0
        inputs = torch.cat([obs, agent_id])
        hidden_state = self.policy.eval_hidden[:, agent_num, :]
        inputs = inputs.unsqueeze(0).to(self.device)
        q_value, self.policy.eval_hidden[:, agent_num, :] = self.policy.eval_drqn_net(inputs, hidden_state)  # expect: DL201
        return int(torch.argmax(q_value))


def generate_episode(agents, conf, steps=3):
    agents.policy.init_hidden(1)
    actions = []
    for _ in range(steps):
        for agent_id in range(conf.n_agents):
            obs = torch.randn(conf.obs_shape)
            actions.append(agents.choose_action(obs, agent_id))
    return actions


if __name__ == "__main__":
    torch.manual_seed(0)
    conf = Conf()
    agents = Agents(conf)
    print(generate_episode(agents, conf))
