# source: https://github.com/Farama-Foundation/Gymnasium/pull/390
# fixed twin: commit 6a98a26 (PR #390, "Update vector_envs_tutorial.py") steps the environments with
#             actions.cpu().numpy().
import numpy as np
import torch
import torch.nn as nn
from torch import optim


class VectorEnvStandIn:
    def __init__(self, num_envs, obs_dim=8, n_actions=4):
        self.num_envs, self.obs_dim, self.n_actions = num_envs, obs_dim, n_actions
        self.rng = np.random.default_rng(0)

    def reset(self, seed=None):
        return self.rng.standard_normal((self.num_envs, self.obs_dim)).astype(np.float32), {}

    def step(self, actions):
        assert isinstance(actions, np.ndarray) and actions.shape == (self.num_envs,)
        states = self.rng.standard_normal((self.num_envs, self.obs_dim)).astype(np.float32)
        rewards = (actions == 0).astype(np.float64)
        terminated = self.rng.random(self.num_envs) < 0.05
        truncated = np.zeros(self.num_envs, dtype=bool)
        return states, rewards, terminated, truncated, {}


class A2C(nn.Module):
    def __init__(self, n_features: int, n_actions: int, device: torch.device, critic_lr: float, actor_lr: float,
                 n_envs: int) -> None:
        super().__init__()
        self.device = device
        self.n_envs = n_envs
        critic_layers = [nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1)]
        actor_layers = [nn.Linear(n_features, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, n_actions)]
        self.critic = nn.Sequential(*critic_layers).to(self.device)
        self.actor = nn.Sequential(*actor_layers).to(self.device)
        self.critic_optim = optim.RMSprop(self.critic.parameters(), lr=critic_lr)
        self.actor_optim = optim.RMSprop(self.actor.parameters(), lr=actor_lr)

    def forward(self, x: np.ndarray):
        x = torch.Tensor(x).to(self.device)
        state_values = self.critic(x)
        action_logits_vec = self.actor(x)
        return (state_values, action_logits_vec)

    def select_action(self, x: np.ndarray):
        state_values, action_logits = self.forward(x)
        action_pd = torch.distributions.Categorical(logits=action_logits)
        actions = action_pd.sample()
        action_log_probs = action_pd.log_prob(actions)
        entropy = action_pd.entropy()
        return (actions, action_log_probs, state_values, entropy)

    def get_losses(self, rewards, action_log_probs, value_preds, entropy, masks, gamma, lam, ent_coef, device):
        T = len(rewards)
        advantages = torch.zeros(T, self.n_envs, device=device)
        gae = 0.0
        for t in reversed(range(T - 1)):
            td_error = (rewards[t] + gamma * masks[t] * value_preds[t + 1] - value_preds[t])
            gae = td_error + gamma * lam * masks[t] * gae
            advantages[t] = gae
        critic_loss = advantages.pow(2).mean()
        actor_loss = (-(advantages.detach() * action_log_probs).mean() - ent_coef * entropy.mean())
        return (critic_loss, actor_loss)

    def update_parameters(self, critic_loss, actor_loss) -> None:
        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()
        self.actor_optim.zero_grad()
        actor_loss.backward()
        self.actor_optim.step()


n_envs = 10
n_updates = 3
n_steps_per_update = 16
gamma = 0.999
lam = 0.95
ent_coef = 0.01
actor_lr = 0.001
critic_lr = 0.005

envs = VectorEnvStandIn(num_envs=n_envs)
obs_shape = envs.obs_dim
action_shape = envs.n_actions

use_cuda = True
if use_cuda:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
else:
    device = torch.device("cpu")

agent = A2C(obs_shape, action_shape, device, critic_lr, actor_lr, n_envs)
envs_wrapper = envs

critic_losses = []
actor_losses = []
entropies = []

for sample_phase in range(n_updates):
    ep_value_preds = torch.zeros(n_steps_per_update, n_envs, device=device)
    ep_rewards = torch.zeros(n_steps_per_update, n_envs, device=device)
    ep_action_log_probs = torch.zeros(n_steps_per_update, n_envs, device=device)
    masks = torch.zeros(n_steps_per_update, n_envs, device=device)

    if sample_phase == 0:
        states, info = envs_wrapper.reset(seed=42)

    for step in range(n_steps_per_update):
        actions, action_log_probs, state_value_preds, entropy = agent.select_action(states)

        states, rewards, terminated, truncated, infos = envs_wrapper.step(
            actions.cpu().numpy()
        )

        ep_value_preds[step] = torch.squeeze(state_value_preds)
        ep_rewards[step] = torch.tensor(rewards, device=device)
        ep_action_log_probs[step] = action_log_probs
        masks[step] = torch.tensor([not term for term in terminated])

    critic_loss, actor_loss = agent.get_losses(ep_rewards, ep_action_log_probs, ep_value_preds, entropy, masks,
                                               gamma, lam, ent_coef, device)
    agent.update_parameters(critic_loss, actor_loss)
    critic_losses.append(critic_loss.detach().cpu().numpy())
    actor_losses.append(actor_loss.detach().cpu().numpy())
    entropies.append(entropy.detach().mean().cpu().numpy())

print(np.mean(critic_losses), np.mean(actor_losses), np.mean(entropies))
