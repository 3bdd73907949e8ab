# source: https://github.com/jcwleo/random-network-distillation-pytorch/pull/14
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (in np.vstack(total_policy))
# bug: the agent returns its action, values and intrinsic reward as host arrays but the policy logits
#      as a detached CUDA tensor; the rollout loop collects those in a list and stacks it with np.vstack
#      for logging, which needs each GPU tensor on the host. The fix (commit 82573ee) keeps a second list
#      of policy.cpu().numpy() copies and stacks that one; the stacking line is marked (the fix's other
#      changes only add the list; DL204).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CnnActorCritic(nn.Module):
    def __init__(self, obs_dim=16, n_actions=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
        self.policy = nn.Linear(32, n_actions)
        self.ext = nn.Linear(32, 1)
        self.int = nn.Linear(32, 1)

    def forward(self, x):
        h = self.body(x)
        return self.policy(h), self.ext(h), self.int(h)


class RNDAgent:
    def __init__(self, use_cuda=True):
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.model = CnnActorCritic().to(self.device)

    def get_action(self, state):
        state = torch.Tensor(state).to(self.device).float()
        policy, value_ext, value_int = self.model(state)
        action_prob = F.softmax(policy, dim=-1).data.cpu().numpy()
        action = (action_prob.cumsum(axis=1) > np.random.rand(action_prob.shape[0], 1)).argmax(axis=1)
        return action, value_ext.data.cpu().numpy().squeeze(), value_int.data.cpu().numpy().squeeze(), policy.detach()


def main(num_worker=4, num_step=8, updates=2):
    agent = RNDAgent(use_cuda=torch.cuda.is_available())
    states = np.zeros([num_worker, 16], dtype=np.float32)
    for _ in range(updates):
        total_action, total_ext_values, total_int_values, total_policy, total_policy_np = [], [], [], [], []
        for _ in range(num_step):
            actions, value_ext, value_int, policy = agent.get_action(states)
            states = np.random.rand(num_worker, 16).astype(np.float32)
            total_action.append(actions)
            total_ext_values.append(value_ext)
            total_int_values.append(value_int)
            total_policy.append(policy)
            total_policy_np.append(policy.cpu().numpy())
        total_ext_values = np.stack(total_ext_values).transpose()
        total_int_values = np.stack(total_int_values).transpose()
        total_logging_policy = np.vstack(total_policy_np)
        print(total_logging_policy.shape, total_ext_values.mean())


if __name__ == "__main__":
    main()
