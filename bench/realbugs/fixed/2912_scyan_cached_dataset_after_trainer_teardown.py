# source: https://github.com/prism-oncology/scyan/issues/32
# fixed twin: commit bc5cdfb no longer caches self.dataset; train_dataloader and predict_dataloader each build
#             TensorDataset(self.x, self.covariates) from the buffers where the module is now.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, RandomSampler, TensorDataset


class ScyanModule(nn.Module):
    def __init__(self, n_markers, n_covariates, n_pops):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_markers + n_covariates, 16), nn.ReLU(), nn.Linear(16, n_markers))
        self.rho = nn.Parameter(torch.randn(n_pops, n_markers))
        self.log_pi = nn.Parameter(torch.zeros(n_pops))

    def forward(self, x, covariates):
        u = self.net(torch.cat([x, covariates], dim=1))
        return u, None

    def compute_probabilities(self, x, covariates):
        u, _ = self(x, covariates)
        log_probs = -((u[:, None, :] - self.rho[None]) ** 2).sum(-1) + torch.log_softmax(self.log_pi, 0)
        return log_probs, u

    def kl(self, x, covariates):
        log_probs, _ = self.compute_probabilities(x, covariates)
        return -torch.logsumexp(log_probs, dim=1).mean()


class Scyan(nn.Module):
    def __init__(self, x, covariates, n_pops=4, batch_size=16, max_samples=64, lr=1e-3):
        super().__init__()
        self.batch_size, self.lr, self._num_workers = batch_size, lr, 0
        self.module = ScyanModule(x.shape[1], covariates.shape[1], n_pops)
        self.register_buffer("x", x)
        self.register_buffer("covariates", covariates)
        self._n_samples = min(max_samples, len(x)) // batch_size * batch_size

    def training_step(self, data, _):
        return self.module.kl(*data)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def train_dataloader(self):
        return DataLoader(TensorDataset(self.x, self.covariates), batch_size=self.batch_size,
                          sampler=RandomSampler(range(len(self.x)), num_samples=self._n_samples),
                          num_workers=self._num_workers)

    def predict_dataloader(self):
        return DataLoader(TensorDataset(self.x, self.covariates), batch_size=self.batch_size,
                          num_workers=self._num_workers)

    def dataset_apply(self, func, data=None):
        if data is None:
            loader = self.predict_dataloader()
        else:
            loader = DataLoader(TensorDataset(*data), batch_size=self.batch_size, num_workers=self._num_workers)
        return torch.cat([func(*batch) for batch in loader], dim=0)

    @torch.no_grad()
    def predict_proba(self):
        log_probs = self.dataset_apply(lambda *data: self.module.compute_probabilities(*data)[0])
        return torch.softmax(log_probs, dim=1)

    @torch.no_grad()
    def predict(self):
        return self.predict_proba().argmax(dim=1)

    def fit(self, max_epochs=2, accelerator="cpu"):
        MiniTrainer(max_epochs, accelerator).fit(self)
        return self


class MiniTrainer:
    def __init__(self, max_epochs, accelerator):
        self.max_epochs = max_epochs
        self.device = torch.device("cuda" if accelerator == "gpu" and torch.cuda.is_available() else "cpu")

    def fit(self, model):
        model.to(self.device)
        optimizer = model.configure_optimizers()
        loader = model.train_dataloader()
        for _ in range(self.max_epochs):
            for i, batch in enumerate(loader):
                loss = model.training_step([t.to(self.device) for t in batch], i)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.cpu()


if __name__ == "__main__":
    torch.manual_seed(0)
    x, covariates = torch.randn(100, 5), torch.randn(100, 2)
    model = Scyan(x, covariates)
    model.fit(accelerator="gpu")
    print(model.predict()[:10])
