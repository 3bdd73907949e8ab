# source: https://github.com/DeepRLChinese/DeepRL-Chinese/issues/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
#        (when checking argument for argument mat2 in method wrapper_CUDA_mm)
#        (python 04_dqn.py --do_train: train -> agent.get_action(torch.from_numpy(state)) -> QNet.forward's fc1)
# bug: main() picks args.device ("cuda" when available unless --no_cuda) and moves the Q network there
#      (agent.Q.to(args.device)), but train() hands the environment's state to agent.get_action as a fresh CPU tensor
#      (and builds the replay batches with torch.tensor(...) on the CPU too). Once the warm-up steps are over, the first
#      greedy action runs the GPU network on the CPU state. The reporter links a corrected file (a fork's commit
#      46830ea, which appends .to(args.device) to the state and to the five batch tensors); the repository's 04_dqn.py
#      was never changed and the issue is open, so there is no upstream fix and no twin. The marker is on the line the
#      traceback points to (DL203: a model moved to a device called on an input that never was). gym's CartPole is
#      replaced by a small random environment that returns Python lists (torch.tensor stands in for torch.from_numpy);
#      plotting, saving and eval() are left out; the target network of this version is kept.
import argparse
import random
from collections import defaultdict
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


class QNet(nn.Module):
    def __init__(self, dim_state, num_action):
        super().__init__()
        self.fc1 = nn.Linear(dim_state, 64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, num_action)

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class DQN:
    def __init__(self, dim_state=None, num_action=None, discount=0.9):
        self.discount = discount
        self.Q = QNet(dim_state, num_action)
        self.target_Q = QNet(dim_state, num_action)
        self.target_Q.load_state_dict(self.Q.state_dict())

    def get_action(self, state):
        qvals = self.Q(state)
        return qvals.argmax()

    def compute_loss(self, s_batch, a_batch, r_batch, d_batch, next_s_batch):
        qvals = self.Q(s_batch).gather(1, a_batch.unsqueeze(1)).squeeze()
        next_qvals, _ = self.target_Q(next_s_batch).detach().max(dim=1)
        return F.mse_loss(r_batch + self.discount * next_qvals * (1 - d_batch), qvals)


def soft_update(target, source, tau=0.01):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.data.copy_(target_param.data * (1.0 - tau) + param.data * tau)


@dataclass
class ReplayBuffer:
    maxsize: int
    size: int = 0
    state: list = field(default_factory=list)
    action: list = field(default_factory=list)
    next_state: list = field(default_factory=list)
    reward: list = field(default_factory=list)
    done: list = field(default_factory=list)

    def push(self, state, action, reward, done, next_state):
        if self.size < self.maxsize:
            self.state.append(state)
            self.action.append(action)
            self.reward.append(reward)
            self.done.append(done)
            self.next_state.append(next_state)
        else:
            position = self.size % self.maxsize
            self.state[position], self.action[position], self.reward[position] = state, action, reward
            self.done[position], self.next_state[position] = done, next_state
        self.size += 1

    def sample(self, n):
        total_number = self.size if self.size < self.maxsize else self.maxsize
        indices = [random.randrange(total_number) for _ in range(n)]
        return ([self.state[i] for i in indices], [self.action[i] for i in indices], [self.reward[i] for i in indices],
                [self.done[i] for i in indices], [self.next_state[i] for i in indices])


class RandomEnv:
    def __init__(self, dim_state=4, num_action=2):
        self.dim_state, self.num_action, self.t = dim_state, num_action, 0

    def reset(self, seed=None):
        self.t = 0
        return [random.uniform(-0.05, 0.05) for _ in range(self.dim_state)], {}

    def step(self, action):
        self.t += 1
        state = [random.uniform(-1, 1) for _ in range(self.dim_state)]
        return state, 1.0, self.t >= 20, False, {}

    def sample_action(self):
        return random.randrange(self.num_action)


def train(args, env, agent):
    replay_buffer = ReplayBuffer(10_000)
    optimizer = torch.optim.Adam(agent.Q.parameters(), lr=args.lr)
    optimizer.zero_grad()
    epsilon, epsilon_max, epsilon_min = 1, 1, 0.1
    episode_reward, episode_length = 0, 0
    log = defaultdict(list)
    log["loss"].append(0)

    agent.Q.train()
    state, _ = env.reset(seed=args.seed)
    for i in range(args.max_steps):
        if random.random() < epsilon or i < args.warmup_steps:
            action = env.sample_action()
        else:
            action = agent.get_action(torch.tensor(state, dtype=torch.float32))  # expect: DL203
            action = action.item()
        next_state, reward, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
        episode_reward += reward
        episode_length += 1
        replay_buffer.push(state, action, reward, done, next_state)
        state = next_state

        if done is True:
            log["episode_reward"].append(episode_reward)
            print(f"i={i}, reward={episode_reward:.0f}, length={episode_length}, loss={log['loss'][-1]:.1e}")
            episode_reward, episode_length = 0, 0
            epsilon = max(epsilon - (epsilon_max - epsilon_min) * args.epsilon_decay, 1e-1)
            state, _ = env.reset()

        if i > args.warmup_steps:
            bs, ba, br, bd, bns = replay_buffer.sample(n=args.batch_size)
            bs = torch.tensor(bs, dtype=torch.float32)
            ba = torch.tensor(ba, dtype=torch.long)
            br = torch.tensor(br, dtype=torch.float32)
            bd = torch.tensor(bd, dtype=torch.float32)
            bns = torch.tensor(bns, dtype=torch.float32)
            loss = agent.compute_loss(bs, ba, br, bd, bns)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            log["loss"].append(loss.item())
            soft_update(agent.target_Q, agent.Q)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim_state", default=4, type=int)
    parser.add_argument("--num_action", default=2, type=int)
    parser.add_argument("--discount", default=0.99, type=float)
    parser.add_argument("--max_steps", default=300, type=int)
    parser.add_argument("--lr", default=1e-3, type=float)
    parser.add_argument("--batch_size", default=32, type=int)
    parser.add_argument("--no_cuda", action="store_true")
    parser.add_argument("--seed", default=42, type=int)
    parser.add_argument("--warmup_steps", default=100, type=int)
    parser.add_argument("--epsilon_decay", default=1 / 10, type=float)
    args = parser.parse_args([])

    args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    env = RandomEnv(args.dim_state, args.num_action)
    agent = DQN(dim_state=args.dim_state, num_action=args.num_action, discount=args.discount)
    agent.Q.to(args.device)
    agent.target_Q.to(args.device)
    train(args, env, agent)


if __name__ == "__main__":
    main()
