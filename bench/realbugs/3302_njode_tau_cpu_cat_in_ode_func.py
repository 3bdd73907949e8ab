# source: https://github.com/HerreraKrachTeichmann/NJODE/issues/14
# error: (issue) File "NJODE/models.py", line 196, in forward: input_f = torch.cat([torch.tanh(x), torch.tanh(h), tau,
#        tdiff], dim=1) - "RuntimeError: Expected all tensors to be on the same device, but found at least two devices,
#        cuda:0 and cpu! (when checking argument for argument tensors in method wrapper___cat)" ("When my GPU is
#        detected I get this error - if I manually set the device to CPU it will run")
# bug: train.py picks cuda:0 whenever CUDA is available, calls model.to(device) and moves X and start_X to the device.
#      NJODE.forward then starts the jump-time tensor with tau = torch.tensor([[0.0]]).repeat(batch_size, 1), on the
#      CPU, and ode_step hands it (and current_time - tau) to ODEFunc.forward, whose torch.cat meets it with the CUDA
#      hidden state. The issue is open and both stored versions of models.py keep the host tau, so there is no twin;
#      the line the traceback points to (the cat in ODEFunc.forward) is marked (DL201); the tau factory in
#      NJODE.forward is the DL202 candidate (a later, extended copy of this model in the code index, its repository
#      not named there, makes the same tau with .to(self.device) - not this repository, so not used as a twin).
#      Reductions: the stock-model data set and its collate function are random irregular observations with the same
#      batch keys; the readout/encoder FFNNs are one linear layer each (residual_enc_dec off); no GRU-ODE-Bayes
#      branch, no checkpoints, metrics files, plots or evaluation against the true conditional expectation; upstream's
#      astype(np.int) is astype(int) (np.int is gone from NumPy 1.24). Needs NumPy (upstream imports it; absent on
#      this machine).
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


# --- NJODE/models.py ---
def compute_loss(X_obs, Y_obs, Y_obs_bj, n_obs_ot, batch_size, eps=1e-10, weight=0.5, M_obs=None):
    inner = (2 * weight * torch.sqrt(torch.sum((X_obs - Y_obs) ** 2, dim=1) + eps) +
             2 * (1 - weight) * torch.sqrt(torch.sum((Y_obs_bj - Y_obs) ** 2, dim=1) + eps)) ** 2
    outer = torch.sum(inner / n_obs_ot)
    return outer / batch_size


def get_ffnn(input_size, output_size, nn_desc, dropout_rate, bias):
    layers = [torch.nn.Linear(input_size, nn_desc[0][0], bias=bias), torch.nn.Tanh(),
              torch.nn.Dropout(p=dropout_rate), torch.nn.Linear(nn_desc[-1][0], output_size, bias=bias)]
    return torch.nn.Sequential(*layers)


class ODEFunc(torch.nn.Module):
    def __init__(self, input_size, hidden_size, ode_nn, dropout_rate=0.0, bias=True, input_current_t=False):
        super().__init__()
        self.input_current_t = input_current_t
        add = 3 if input_current_t else 2
        self.f = get_ffnn(input_size=input_size + hidden_size + add, output_size=hidden_size,
                          nn_desc=ode_nn, dropout_rate=dropout_rate, bias=bias)

    def forward(self, x, h, tau, tdiff):
        if self.input_current_t:
            input_f = torch.cat([torch.tanh(x), torch.tanh(h), tau, tdiff, tau + tdiff], dim=1)
        else:
            input_f = torch.cat([torch.tanh(x), torch.tanh(h), tau, tdiff], dim=1)  # expect: DL201
        df = self.f(input_f)
        return df


class NJODE(torch.nn.Module):
    def __init__(self, input_size, hidden_size, output_size, ode_nn, readout_nn, enc_nn, use_rnn,
                 bias=True, dropout_rate=0, solver="euler", weight=0.5, weight_decay=1., **options):
        super().__init__()
        self.epoch = 1
        self.weight = weight
        self.use_rnn = use_rnn
        self.ode_f = ODEFunc(input_size, hidden_size, ode_nn, dropout_rate, bias)
        self.encoder_map = torch.nn.Linear(input_size, hidden_size, bias=bias)
        self.readout_map = torch.nn.Linear(hidden_size, output_size, bias=bias)
        self.solver = solver

    def ode_step(self, h, delta_t, current_time, last_X, tau):
        if self.solver == "euler":
            h = h + delta_t * self.ode_f(last_X, h, tau, current_time - tau)
        else:
            raise ValueError("Unknown solver '{}'.".format(self.solver))
        current_time += delta_t
        return h, current_time

    def forward(self, times, time_ptr, X, obs_idx, delta_t, T, start_X, n_obs_ot, return_path=False, get_loss=True):
        h = self.encoder_map(torch.tanh(start_X))
        last_X = start_X
        batch_size = start_X.size()[0]
        tau = torch.tensor([[0.0]]).repeat(batch_size, 1)
        current_time = 0.0
        loss = 0
        for i, obs_time in enumerate(times):
            while current_time < (obs_time - 1e-10 * delta_t):
                if current_time < obs_time - delta_t:
                    delta_t_ = delta_t
                else:
                    delta_t_ = obs_time - current_time
                if self.solver == 'euler':
                    h, current_time = self.ode_step(h, delta_t_, current_time, last_X=last_X, tau=tau)
            start = time_ptr[i]
            end = time_ptr[i + 1]
            X_obs = X[start:end]
            i_obs = obs_idx[start:end]
            Y_bj = self.readout_map(h)
            temp = h.clone()
            temp[i_obs] = self.encoder_map(torch.tanh(X_obs))
            h = temp
            Y = self.readout_map(h)
            if get_loss:
                loss = loss + compute_loss(X_obs=X_obs, Y_obs=Y[i_obs], Y_obs_bj=Y_bj[i_obs], n_obs_ot=n_obs_ot[i_obs],
                                           batch_size=batch_size, weight=self.weight)
            temp_X = last_X.clone()
            temp_tau = tau.clone()
            temp_X[i_obs] = X_obs
            temp_tau[i_obs] = obs_time.astype(np.float64)
            last_X = temp_X
            tau = temp_tau
        return h, loss


# --- NJODE/data_utils.py ---
class IrregularDataset(Dataset):
    def __init__(self, n_paths=16, n_steps=10, dim=1):
        g = torch.Generator().manual_seed(0)
        self.paths = torch.randn(n_paths, dim, n_steps, generator=g).cumsum(2)
        self.observed = torch.rand(n_paths, n_steps, generator=g) < 0.5

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        return {"idx": idx, "stock_path": self.paths[idx], "observed_dates": self.observed[idx]}


def custom_collate_fn(batch, dt=0.1):
    stock_paths = torch.stack([b["stock_path"] for b in batch]).numpy()
    observed_dates = torch.stack([b["observed_dates"] for b in batch]).numpy()
    start_X = torch.tensor(stock_paths[:, :, 0], dtype=torch.float32)
    X, times, time_ptr, obs_idx = [], [], [0], []
    for t in range(1, observed_dates.shape[1]):
        idx = np.where(observed_dates[:, t])[0]
        if len(idx) == 0:
            continue
        times.append(t * dt)
        X.append(stock_paths[idx, :, t])
        obs_idx.append(idx)
        time_ptr.append(time_ptr[-1] + len(idx))
    return {"times": np.array(times), "time_ptr": time_ptr,
            "X": torch.tensor(np.concatenate(X), dtype=torch.float32),
            "start_X": start_X, "obs_idx": torch.tensor(np.concatenate(obs_idx), dtype=torch.long)}


# --- NJODE/train.py ---
def train(hidden_size=10, epochs=2, batch_size=8, delta_t=0.01, T=1.0):
    if torch.cuda.is_available():
        gpu_num = 0
        device = torch.device("cuda:{}".format(gpu_num))
        torch.cuda.set_device(gpu_num)
    else:
        device = torch.device("cpu")
    dl = DataLoader(dataset=IrregularDataset(), collate_fn=custom_collate_fn, shuffle=True, batch_size=batch_size)
    model = NJODE(input_size=1, hidden_size=hidden_size, output_size=1, ode_nn=((50, 'tanh'),),
                  readout_nn=None, enc_nn=None, use_rnn=False, options={})
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001, weight_decay=0.0005)
    while model.epoch <= epochs:
        model.train()
        for i, b in enumerate(dl):
            optimizer.zero_grad()
            times = b["times"]
            time_ptr = b["time_ptr"]
            X = b["X"].to(device)
            start_X = b["start_X"].to(device)
            obs_idx = b["obs_idx"]
            b_size = start_X.size()[0]
            unique_idx, counts = np.unique(obs_idx.detach().numpy(), return_counts=True)
            n_obs_ot = np.zeros((b_size))
            n_obs_ot[unique_idx] = counts
            n_obs_ot = torch.tensor(n_obs_ot.astype(int)).to(device)
            hT, loss = model(times, time_ptr, X, obs_idx, delta_t, T, start_X, n_obs_ot,
                             return_path=False, get_loss=True)
            loss.backward()
            optimizer.step()
        print("epoch", model.epoch, loss.item())
        model.epoch += 1


if __name__ == '__main__':
    train()
