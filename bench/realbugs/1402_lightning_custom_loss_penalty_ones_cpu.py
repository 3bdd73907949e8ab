# source: https://github.com/Lightning-AI/pytorch-lightning/issues/17299
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: a custom regression loss used from a LightningModule builds a per-sample penalty vector with
#      torch.ones(batch) and no device; Lightning has put the model and the batch on the GPU, so the
#      penalty is the only CPU tensor and the weighting fails. The maintainer's fix (issue closed with
#      it) adds device=y_pred.device to the marked factory (DL202: a factory without device= that
#      meets the inputs' tensors).
import torch
import torch.nn as nn


class PenalizedMSE(nn.Module):
    def __init__(self, penalty=2.0):
        super().__init__()
        self.penalty = penalty

    def forward(self, y_pred, y_true):
        penalty_factor = torch.ones(y_pred.size(0), dtype=torch.float32)  # expect: DL202
        wrong_sign = (torch.sign(y_pred) != torch.sign(y_true)).squeeze(-1)
        penalty_factor[wrong_sign] = self.penalty
        return (penalty_factor * ((y_pred - y_true) ** 2).squeeze(-1)).mean()


class Regressor(nn.Module):
    def __init__(self, n_features=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.criterion = PenalizedMSE()

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.criterion(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def fit(module, batches, device):
    # what the Trainer does: model and batches on the accelerator
    module.to(device)
    optimizer = module.configure_optimizers()
    for i, (x, y) in enumerate(batches):
        loss = module.training_step((x.to(device), y.to(device)), i)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = [(torch.randn(32, 8), torch.randn(32, 1)) for _ in range(3)]
    print(fit(Regressor(), data, device))
