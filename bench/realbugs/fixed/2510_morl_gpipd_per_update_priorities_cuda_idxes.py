# source: https://github.com/LucasAlegre/morl-baselines/pull/185
# fixed twin: the sampled indices are brought to the host before the priorities are written back, update_priorities(idxes.cpu(), priority) (PR 185, commit ba61361). numpy must be installed to run it.
import numpy as np
import torch as th
import torch.nn as nn


class SumTree:
    def __init__(self, max_size):
        self.nodes = []
        level_size = 1
        for _ in range(int(np.ceil(np.log2(max_size))) + 1):
            self.nodes.append(np.zeros(level_size))
            level_size *= 2

    def sample(self, batch_size):
        query_value = np.random.uniform(0, self.nodes[0][0], size=batch_size)
        node_index = np.zeros(batch_size, dtype=int)
        for nodes in self.nodes[1:]:
            node_index *= 2
            left_sum = nodes[node_index]
            is_greater = np.greater(query_value, left_sum)
            node_index += is_greater
            query_value -= left_sum * is_greater
        return node_index

    def set(self, node_index, new_priority):
        priority_diff = new_priority - self.nodes[-1][node_index]
        for nodes in self.nodes[::-1]:
            np.add.at(nodes, node_index, priority_diff)
            node_index //= 2

    def batch_set(self, node_index, new_priority):
        node_index, unique_index = np.unique(node_index, return_index=True)
        priority_diff = new_priority[unique_index] - self.nodes[-1][node_index]
        for nodes in self.nodes[::-1]:
            np.add.at(nodes, node_index, priority_diff)
            node_index //= 2


class PrioritizedReplayBuffer:
    def __init__(self, obs_dim, action_dim, rew_dim, max_size=1024, min_priority=1e-5):
        self.ptr, self.size, self.max_size = 0, 0, max_size
        self.obs = np.zeros((max_size, obs_dim), dtype=np.float32)
        self.actions = np.zeros((max_size, action_dim), dtype=np.float32)
        self.rewards = np.zeros((max_size, rew_dim), dtype=np.float32)
        self.tree = SumTree(max_size)
        self.min_priority = min_priority

    def add(self, obs, action, reward, priority=None):
        self.obs[self.ptr], self.actions[self.ptr], self.rewards[self.ptr] = obs, action, reward
        self.tree.set(self.ptr, self.min_priority if priority is None else priority)
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size, to_tensor=False, device=None):
        idxes = self.tree.sample(batch_size)
        experience = (self.obs[idxes], self.actions[idxes], self.rewards[idxes], idxes)
        if to_tensor:
            return tuple(map(lambda x: th.tensor(x).to(device), experience))
        return experience

    def update_priorities(self, idxes, priorities):
        priorities = np.maximum(priorities, self.min_priority)
        self.tree.batch_set(idxes, priorities)


class GPIPDContinuousAction:
    def __init__(self, obs_dim=4, action_dim=2, reward_dim=2, alpha=0.6, min_priority=0.1, device="auto"):
        self.device = th.device("cuda" if th.cuda.is_available() else "cpu") if device == "auto" else device
        self.alpha, self.min_priority, self.batch_size = alpha, min_priority, 32
        self.q_net = nn.Linear(obs_dim + action_dim + reward_dim, reward_dim).to(self.device)
        self.optimizer = th.optim.Adam(self.q_net.parameters(), lr=1e-3)
        self.replay_buffer = PrioritizedReplayBuffer(obs_dim, action_dim, reward_dim)

    def update(self, w: th.Tensor):
        s_obs, s_actions, s_rewards, idxes = self.replay_buffer.sample(
            self.batch_size, to_tensor=True, device=self.device)
        q = self.q_net(th.cat([s_obs, s_actions, w.repeat(len(s_obs), 1)], dim=1))
        td = q - s_rewards
        loss = (td ** 2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        per = th.einsum("br,br->b", td.detach().abs(), w.repeat(len(idxes), 1))
        priority = per.cpu().numpy().flatten()
        priority = priority.clip(min=self.min_priority) ** self.alpha
        self.replay_buffer.update_priorities(idxes.cpu(), priority)


if __name__ == "__main__":
    agent = GPIPDContinuousAction()
    for _ in range(100):
        agent.replay_buffer.add(np.random.rand(4), np.random.rand(2), np.random.rand(2), priority=1.0)
    w = th.tensor([0.5, 0.5], device=agent.device)
    for step in range(3):
        agent.update(w)
    print("root priority", round(float(agent.replay_buffer.tree.nodes[0][0]), 3))
