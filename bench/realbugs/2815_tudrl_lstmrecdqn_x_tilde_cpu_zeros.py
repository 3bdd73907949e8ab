# source: https://github.com/MarWaltz/TUD_RL/issues/21
# error: RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and parameter
#        tensor at cuda:0 (training LSTMRecDQN with device: cuda in the config)
# bug: the agent moves its LSTM-recursive DQN to the configured device, but the network's forward builds the buffer
#      that collects the per-step encodings, x_tilde, with torch.zeros and no device. Filling it with the inner LSTM's
#      GPU outputs copies them into the CPU buffer, and the outer LSTM then gets a CPU input. The maintainer's fix
#      (commit 9e65820) hands the agent's device to the network and moves x_tilde to it (DL202: a tensor made without
#      device= meets the model's tensors).
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMRecDQN(nn.Module):
    def __init__(self, num_actions, num_obs_OS=7, num_obs_TS=6):
        super().__init__()
        self.num_obs_OS, self.num_obs_TS = num_obs_OS, num_obs_TS
        self.inner_lstm = nn.LSTM(input_size=num_obs_TS, hidden_size=64, batch_first=True)
        self.os_dense = nn.Linear(num_obs_OS, 64)
        self.outer_lstm = nn.LSTM(input_size=128, hidden_size=128, batch_first=True)
        self.head = nn.Linear(128, num_actions)

    def _encode(self, s):
        s_OS, s_TS = s[:, :self.num_obs_OS], s[:, self.num_obs_OS:]
        s_TS = s_TS.view(s.shape[0], -1, self.num_obs_TS)
        _, (h_TS, _) = self.inner_lstm(s_TS)
        return torch.cat([F.relu(self.os_dense(s_OS)), h_TS[0]], dim=1)

    def forward(self, s, s_hist):
        batch_size, history_length, _ = s_hist.shape
        x_tilde = torch.zeros((batch_size, history_length + 1, 128))  # expect: DL202
        for t in range(history_length):
            x_tilde[:, t, :] = self._encode(s_hist[:, t, :])
        x_tilde[:, history_length, :] = self._encode(s)
        out, _ = self.outer_lstm(x_tilde)
        return self.head(out[:, -1, :])


class LSTMRecDQNAgent:
    def __init__(self, c):
        self.device = c["device"]
        self.num_actions = c["num_actions"]
        self.DQN = LSTMRecDQN(num_actions=self.num_actions).to(self.device)
        self.optimizer = torch.optim.Adam(self.DQN.parameters(), lr=1e-3)

    def select_action(self, s, s_hist):
        s = torch.tensor(s, dtype=torch.float32).unsqueeze(0).to(self.device)
        s_hist = torch.tensor(s_hist, dtype=torch.float32).unsqueeze(0).to(self.device)
        with torch.no_grad():
            q = self.DQN(s, s_hist)
        return int(torch.argmax(q).item())

    def train(self, s, s_hist, a, r):
        s, s_hist, a, r = s.to(self.device), s_hist.to(self.device), a.to(self.device), r.to(self.device)
        q = self.DQN(s, s_hist).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = F.mse_loss(q, r)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    config = {"device": "cuda" if torch.cuda.is_available() else "cpu", "num_actions": 3}
    agent = LSTMRecDQNAgent(config)
    obs_dim = 7 + 2 * 6
    print(agent.select_action(torch.randn(obs_dim).tolist(), torch.randn(2, obs_dim).tolist()))
    batch = (torch.randn(4, obs_dim), torch.randn(4, 2, obs_dim), torch.randint(0, 3, (4,)), torch.randn(4))
    print(agent.train(*batch))
