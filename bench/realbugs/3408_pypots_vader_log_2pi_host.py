# source: https://github.com/WenjieDu/PyPOTS/pull/22
# error: (PR description) "Fix the bugs in VaDER and CRLI that tensors are on different devices when running on CUDA"
# bug: VaDER keeps its data and model on self.device (cuda when available; BaseModel.check_input moves the array
#      there), but _VaDER.forward computes the latent loss's constant with log_2pi = torch.log(torch.FloatTensor([2 *
#      torch.pi])), a one-element (not 0-dim) tensor on the CPU, and adds it to the CUDA log-variances gathered with
#      index_select. The fix (commit 40477fe, merged in PR #22) takes device = X.device and builds the constant with
#      torch.tensor([2 * torch.pi], device=device); that line is marked (DL202); the same commit's meshgrid aranges only
#      switch from device=X.device to the new local and are not marked; its CRLI change (passing self.device instead of
#      the constructor's device argument to _CRLI) is outside this reproduction. Reductions: the peephole LSTM cells are
#      nn.LSTMCell, DatasetForGRUD returns (indices, X, X, missing_mask, X, X), BaseNNClusterer is folded into VaDER
#      (device choice and check_input as in pypots/base.py), the validation loop, patience and model saving are
#      dropped, and the driver trains for one pretrain epoch and one epoch. Needs NumPy, SciPy and scikit-learn, as
#      upstream.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from scipy.stats import multivariate_normal
from sklearn.mixture import GaussianMixture
from torch.nn.parameter import Parameter
from torch.utils.data import DataLoader, Dataset


def cal_mse(inputs, target, mask=None):
    lib = np if isinstance(inputs, np.ndarray) else torch
    if mask is not None:
        return lib.sum(lib.square(inputs - target) * mask) / (lib.sum(mask) + 1e-9)
    return lib.mean(lib.square(inputs - target))


class DatasetForGRUD(Dataset):
    def __init__(self, X):
        self.X = torch.nan_to_num(X)
        self.missing_mask = (~torch.isnan(X)).type(torch.float32)

    def __len__(self):
        return len(self.X)

    def __getitem__(self, idx):
        return torch.tensor(idx), self.X[idx], self.X[idx], self.missing_mask[idx], self.X[idx], self.X[idx]


class ImplicitImputation(nn.Module):
    def __init__(self, d_input):
        super().__init__()
        self.projection_layer = nn.Linear(d_input, d_input, bias=False)

    def forward(self, X, missing_mask):
        imputation = self.projection_layer(X)
        return X * missing_mask + imputation * (1 - X)


class GMMLayer(nn.Module):
    def __init__(self, d_hidden, n_clusters):
        super().__init__()
        self.mu_c_unscaled = Parameter(torch.Tensor(n_clusters, d_hidden))
        self.var_c_unscaled = Parameter(torch.Tensor(n_clusters, d_hidden))
        self.phi_c_unscaled = torch.Tensor(n_clusters)

    def set_values(self, mu, var, phi):
        self.mu_c_unscaled = torch.nn.Parameter(mu)
        self.var_c_unscaled = torch.nn.Parameter(var)
        self.phi_c_unscaled = torch.tensor(phi)

    def forward(self):
        return self.mu_c_unscaled, F.softplus(self.var_c_unscaled), torch.softmax(self.phi_c_unscaled, dim=0)


class _VaDER(nn.Module):
    def __init__(self, n_steps, d_input, n_clusters, d_rnn_hidden, d_mu_stddev, eps=1e-9, alpha=1.0):
        super().__init__()
        self.n_steps, self.d_input, self.n_clusters = n_steps, d_input, n_clusters
        self.d_rnn_hidden, self.d_mu_stddev, self.eps, self.alpha = d_rnn_hidden, d_mu_stddev, eps, alpha
        self.implicit_imputation_layer = ImplicitImputation(d_input)
        self.encoder = nn.LSTMCell(d_input, d_rnn_hidden)
        self.decoder = nn.LSTMCell(d_input, d_rnn_hidden)
        self.ae_encode_layers = nn.Sequential(nn.Linear(d_rnn_hidden, d_rnn_hidden), nn.Softplus())
        self.ae_decode_layers = nn.Sequential(nn.Linear(d_mu_stddev, d_rnn_hidden), nn.Softplus())
        self.mu_layer = nn.Linear(d_rnn_hidden, d_mu_stddev)
        self.stddev_layer = nn.Linear(d_rnn_hidden, d_mu_stddev)
        self.rnn_transform_layer = nn.Linear(d_rnn_hidden, d_input)
        self.gmm_layer = GMMLayer(d_mu_stddev, n_clusters)

    def z_sampling(self, mu_tilde, stddev_tilde):
        noise = mu_tilde.data.new(mu_tilde.size()).normal_()
        return torch.add(mu_tilde, torch.exp(0.5 * stddev_tilde) * noise)

    def encode(self, X, missing_mask):
        batch_size = X.size(0)
        X_imputed = self.implicit_imputation_layer(X, missing_mask)
        hidden_state = torch.zeros((batch_size, self.d_rnn_hidden), dtype=X.dtype, device=X.device)
        cell_state = torch.zeros((batch_size, self.d_rnn_hidden), dtype=X.dtype, device=X.device)
        for i in range(self.n_steps):
            hidden_state, cell_state = self.encoder(X_imputed[:, i, :], (hidden_state, cell_state))
        cell_state_collector = self.ae_encode_layers(cell_state)
        mu_tilde = self.mu_layer(cell_state_collector)
        stddev_tilde = self.stddev_layer(cell_state_collector)
        return self.z_sampling(mu_tilde, stddev_tilde), mu_tilde, stddev_tilde

    def decode(self, z):
        hidden_state = self.ae_decode_layers(z)
        cell_state = torch.zeros(hidden_state.size(), dtype=z.dtype, device=z.device)
        inputs = torch.zeros((z.size(0), self.n_steps, self.d_input), dtype=z.dtype, device=z.device)
        hidden_state_collector = torch.empty((z.size(0), self.n_steps, self.d_rnn_hidden), dtype=z.dtype, device=z.device)
        for i in range(self.n_steps):
            hidden_state, cell_state = self.decoder(inputs[:, i, :], (hidden_state, cell_state))
            hidden_state_collector[:, i, :] = hidden_state
        return self.rnn_transform_layer(hidden_state_collector)

    def get_results(self, X, missing_mask):
        z, mu_tilde, stddev_tilde = self.encode(X, missing_mask)
        X_reconstructed = self.decode(z)
        mu_c, var_c, phi_c = self.gmm_layer()
        return X_reconstructed, mu_c, var_c, phi_c, z, mu_tilde, stddev_tilde

    def forward(self, inputs, pretrain=False):
        X, missing_mask = inputs["X"], inputs["missing_mask"]
        X_reconstructed, mu_c, var_c, phi_c, z, mu_tilde, stddev_tilde = self.get_results(X, missing_mask)
        unscaled_reconstruction_loss = cal_mse(X_reconstructed, X, missing_mask)
        reconstruction_loss = unscaled_reconstruction_loss * self.n_steps * self.d_input / missing_mask.sum()
        if pretrain:
            return {"loss": reconstruction_loss, "z": z}

        var_tilde = torch.exp(stddev_tilde)
        stddev_c = torch.log(var_c + self.eps)
        log_2pi = torch.log(torch.FloatTensor([2 * torch.pi]))  # expect: DL202
        log_phi_c = torch.log(phi_c + self.eps)
        batch_size = z.shape[0]
        ii, jj = torch.meshgrid(torch.arange(self.n_clusters, dtype=torch.int64, device=X.device),
                                torch.arange(batch_size, dtype=torch.int64, device=X.device))
        ii, jj = ii.flatten(), jj.flatten()
        lsc_b = stddev_c.index_select(dim=0, index=ii)
        mc_b = mu_c.index_select(dim=0, index=ii)
        sc_b = var_c.index_select(dim=0, index=ii)
        z_b = z.index_select(dim=0, index=jj)
        log_pdf_z = -0.5 * (lsc_b + log_2pi + torch.square(z_b - mc_b) / sc_b)
        log_pdf_z = log_pdf_z.reshape([batch_size, self.n_clusters, self.d_mu_stddev])
        log_p = log_phi_c + log_pdf_z.sum(dim=2)
        log_gamma_c = log_p - log_p.logsumexp(dim=1, keepdim=True)
        gamma_c = torch.exp(log_gamma_c)
        term1 = torch.log(var_c + self.eps)
        st_b = var_tilde.index_select(dim=0, index=jj)
        term2 = torch.reshape(st_b / (sc_b + self.eps), [batch_size, self.n_clusters, self.d_mu_stddev])
        mt_b = mu_tilde.index_select(dim=0, index=jj)
        term3 = torch.reshape(torch.square(mt_b - mc_b) / (sc_b + self.eps), [batch_size, self.n_clusters, self.d_mu_stddev])
        latent_loss1 = (0.5 * torch.sum(gamma_c * torch.sum(term1 + term2 + term3, dim=2), dim=1)).mean()
        latent_loss2 = (-torch.sum(gamma_c * (log_phi_c - log_gamma_c), dim=1)).mean()
        latent_loss3 = (-0.5 * torch.sum(1 + stddev_tilde, dim=1)).mean()
        latent_loss = latent_loss1 + latent_loss2 + latent_loss3
        return {"loss": reconstruction_loss + self.alpha * latent_loss, "z": z}


def inverse_softplus(x):
    b = x < 1e2
    x[b] = np.log(np.exp(x[b]) - 1.0 + 1e-9)
    return x


class VaDER:
    def __init__(self, n_steps, n_features, n_clusters, rnn_hidden_size, d_mu_stddev, learning_rate=1e-3,
                 pretrain_epochs=10, epochs=100, batch_size=32, weight_decay=1e-5, device=None):
        if device is None:
            self.device = torch.device("cuda:0" if torch.cuda.is_available() and torch.cuda.device_count() > 0 else "cpu")
        else:
            self.device = device
        self.n_steps, self.n_features, self.n_clusters = n_steps, n_features, n_clusters
        self.lr, self.epochs, self.pretrain_epochs = learning_rate, epochs, pretrain_epochs
        self.batch_size, self.weight_decay = batch_size, weight_decay
        self.model = _VaDER(n_steps, n_features, n_clusters, rnn_hidden_size, d_mu_stddev)
        self.model = self.model.to(self.device)

    def check_input(self, X):
        if isinstance(X, np.ndarray):
            X = torch.from_numpy(X).to(self.device)
        else:
            X = X.to(self.device)
        return X

    def assemble_input_data(self, data):
        indices, X, _, missing_mask, _, _ = data
        return {"X": X, "missing_mask": missing_mask}

    def fit(self, train_X):
        train_X = self.check_input(train_X)
        training_loader = DataLoader(DatasetForGRUD(train_X), batch_size=self.batch_size, shuffle=True)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        for epoch in range(self.pretrain_epochs):
            for data in training_loader:
                self.optimizer.zero_grad()
                self.model.forward(self.assemble_input_data(data), pretrain=True)["loss"].backward()
                self.optimizer.step()
        with torch.no_grad():
            sample_collector = [self.model.forward(self.assemble_input_data(data), pretrain=True)["z"]
                                for data in training_loader]
            samples = torch.cat(sample_collector).cpu().detach().numpy()
            gmm = GaussianMixture(n_components=self.n_clusters, covariance_type="diag", reg_covar=1e-04)
            gmm.fit(samples)
            phi = np.log(gmm.weights_ + 1e-9)
            mu = gmm.means_
            var = inverse_softplus(gmm.covariances_)
            self.model.gmm_layer.set_values(torch.from_numpy(mu).to(self.device),
                                            torch.from_numpy(var).to(self.device),
                                            torch.from_numpy(phi).to(self.device))
        for epoch in range(self.epochs):
            losses = []
            for data in training_loader:
                self.optimizer.zero_grad()
                results = self.model.forward(self.assemble_input_data(data))
                results["loss"].backward()
                self.optimizer.step()
                losses.append(results["loss"].item())
            print(f"epoch {epoch}: training loss {np.mean(losses):.4f}")
        return self


if __name__ == "__main__":
    X = np.random.randn(64, 6, 3).astype(np.float32)
    X[X > 2] = np.nan
    vader = VaDER(n_steps=6, n_features=3, n_clusters=2, rnn_hidden_size=8, d_mu_stddev=4,
                  pretrain_epochs=1, epochs=1, batch_size=16)
    vader.fit(X)
