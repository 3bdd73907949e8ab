# source: https://github.com/sbi-dev/sbi/issues/441
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the ratio estimator trainer moves its classifier and every batch to the configured device, but SNRE_A's loss
#      builds the alternating joint/marginal labels with ones(2 * batch_size) on the host and hands them to BCELoss
#      with the classifier's GPU output. The maintainers' fix (commit 231b526) creates the labels on self._device; the
#      changed line is marked (DL202: a factory without device= meeting the model's tensors).
import torch
from torch import eye, nn, ones
from torch.utils.data import DataLoader, TensorDataset


def repeat_rows(x, num_reps):
    shape = x.shape
    x = x.unsqueeze(1)
    x = x.expand(shape[0], num_reps, *shape[1:])
    return x.reshape(shape[0] * num_reps, *shape[1:])


class Classifier(nn.Module):
    def __init__(self, theta_dim, x_dim, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(theta_dim + x_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, inputs):
        theta, x = inputs
        return self.net(torch.cat([theta, x], dim=1))


class RatioEstimator:
    def __init__(self, classifier, device="cpu"):
        self._device = device
        self._neural_net = classifier

    def _classifier_logits(self, theta, x, num_atoms):
        batch_size = theta.shape[0]
        repeated_x = repeat_rows(x, num_atoms)
        probs = ones(batch_size, batch_size) * (1 - eye(batch_size)) / (batch_size - 1)
        choices = torch.multinomial(probs, num_samples=num_atoms - 1, replacement=False)
        contrasting_theta = theta[choices]
        atomic_theta = torch.cat((theta[:, None, :], contrasting_theta), dim=1).reshape(batch_size * num_atoms, -1)
        return self._neural_net([atomic_theta, repeated_x])

    def train(self, theta, x, num_atoms, batch_size=8, epochs=2):
        loader = DataLoader(TensorDataset(theta, x), batch_size=batch_size, shuffle=True, drop_last=True)
        self._neural_net.to(self._device)
        optimizer = torch.optim.Adam(self._neural_net.parameters(), lr=1e-3)
        for _ in range(epochs):
            for batch in loader:
                optimizer.zero_grad()
                theta_batch, x_batch = batch[0].to(self._device), batch[1].to(self._device)
                loss = self._loss(theta_batch, x_batch, num_atoms)
                loss.backward()
                optimizer.step()
        return self._neural_net


class SNRE_A(RatioEstimator):
    def train(self, theta, x, **kwargs):
        return super().train(theta, x, num_atoms=2, **kwargs)

    def _loss(self, theta, x, num_atoms):
        assert theta.shape[0] == x.shape[0], "Batch sizes for theta and x must match."
        batch_size = theta.shape[0]
        logits = self._classifier_logits(theta, x, num_atoms)
        likelihood = torch.sigmoid(logits).squeeze()
        labels = ones(2 * batch_size)  # expect: DL202
        labels[1::2] = 0.0
        return nn.BCELoss()(likelihood, labels)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    theta = torch.rand(64, 3)
    x = theta + 0.1 * torch.randn(64, 3)
    inference = SNRE_A(Classifier(3, 3), device=device)
    print(inference.train(theta, x))
