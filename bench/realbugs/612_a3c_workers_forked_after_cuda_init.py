# source: https://github.com/Quantum-Cheese/DeepReinforcementLearning_Pytorch/issues/3
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: the A3C trainer puts its shared global networks on cuda:0 in the parent process and then starts
#      its workers as multiprocessing.Process subclasses (fork start method on Linux); each worker's
#      run() moves the environment state to the same CUDA device, i.e. uses CUDA in a child forked
#      after the parent initialised it. No upstream fix is public; the CUDA use in the forked worker is
#      marked (no rule covers CUDA after fork; DL303, about CUDA initialisation order, is the closest).
import multiprocessing as mp

import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Policy(nn.Module):
    def __init__(self, state_size=4, action_size=2):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(state_size, 32), nn.ReLU(), nn.Linear(32, action_size))

    def act(self, state):
        probs = torch.softmax(self.fc(state), dim=-1)
        return int(torch.multinomial(probs, 1).item())


class Worker(mp.Process):
    def __init__(self, global_policy, worker_id, rew_queue, episodes=2):
        super().__init__()
        self.global_policy = global_policy
        self.worker_id = worker_id
        self.rew_queue = rew_queue
        self.episodes = episodes
        self.local_policy = Policy().to(device)

    def run(self):
        for _ in range(self.episodes):
            total = 0.0
            for _ in range(5):
                state = np.random.randn(4).astype(np.float32)
                state = torch.from_numpy(state).float().unsqueeze(0).to(device)  # expect: DL303
                total += self.local_policy.act(state)
            self.rew_queue.put(total)
        self.rew_queue.put(None)


class A3C:
    def __init__(self, worker_num=2):
        self.rew_queue = mp.Queue()
        self.global_policy = Policy().to(device)
        self.global_policy.share_memory()
        self.workers = [Worker(self.global_policy, i, self.rew_queue) for i in range(worker_num)]

    def train_worker(self):
        scores, finished = [], 0
        [w.start() for w in self.workers]
        while finished < len(self.workers):
            r = self.rew_queue.get()
            if r is None:
                finished += 1
            else:
                scores.append(r)
        [w.join() for w in self.workers]
        return scores


if __name__ == "__main__":
    print(A3C().train_worker())
