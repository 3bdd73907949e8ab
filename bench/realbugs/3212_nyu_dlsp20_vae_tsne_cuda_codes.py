# source: https://github.com/Atcold/NYU-DLSP20/issues/776
# error: (issue) "[11-VAE.ipynb] TSNE fit_transform() happens a error with cuda" - the 16th cell
#        E.append(TSNE(n_components=2).fit_transform(X[-1])) fails in a CUDA environment (NumPy conversion of a CUDA tensor)
# bug: the notebook picks device = cuda:0 when available, moves the VAE there and each test batch with x.to(device),
#      and stores the latent means of every epoch as codes['μ'].append(torch.cat(means)) - CUDA tensors (mu.detach()).
#      The t-SNE cell hands X[-1], a slice of those codes, to scikit-learn's TSNE.fit_transform, which converts it
#      with NumPy. Commit 6d6c3170 (PR #786, "Move tensor to the CPU for t-SNE fitting") passes
#      X[-1].detach().cpu(); that line is marked (DL204). Reductions: MNIST is random images and labels (no download),
#      2 epochs instead of 10 and t-SNE over epochs (0, 2), 200 samples; the display/interpolation cells and
#      res.plot_lib are dropped; the notebook's cells are one script. Needs scikit-learn and NumPy (upstream imports;
#      absent on this machine).
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
torch.cuda.manual_seed(1)

batch_size = 256
train_loader = DataLoader(TensorDataset(torch.rand(512, 1, 28, 28), torch.randint(0, 10, (512,))),
                          batch_size=batch_size, shuffle=True)
test_loader = DataLoader(TensorDataset(torch.rand(256, 1, 28, 28), torch.randint(0, 10, (256,))),
                         batch_size=batch_size, shuffle=True)

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

d = 20


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(784, d ** 2), nn.ReLU(), nn.Linear(d ** 2, d * 2))
        self.decoder = nn.Sequential(nn.Linear(d, d ** 2), nn.ReLU(), nn.Linear(d ** 2, 784), nn.Sigmoid())

    def reparameterise(self, mu, logvar):
        if self.training:
            std = logvar.mul(0.5).exp_()
            eps = std.new_empty(std.size()).normal_()
            return eps.mul_(std).add_(mu)
        else:
            return mu

    def forward(self, x):
        mu_logvar = self.encoder(x.view(-1, 784)).view(-1, 2, d)
        mu = mu_logvar[:, 0, :]
        logvar = mu_logvar[:, 1, :]
        z = self.reparameterise(mu, logvar)
        return self.decoder(z), mu, logvar


model = VAE().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


def loss_function(x_hat, x, mu, logvar, β=1):
    BCE = nn.functional.binary_cross_entropy(x_hat, x.view(-1, 784), reduction='sum')
    KLD = 0.5 * torch.sum(logvar.exp() - logvar - 1 + mu.pow(2))
    return BCE + β * KLD


epochs = 2
codes = dict(μ=list(), logσ2=list(), y=list())
for epoch in range(0, epochs + 1):
    if epoch > 0:
        model.train()
        train_loss = 0
        for x, _ in train_loader:
            x = x.to(device)
            x_hat, mu, logvar = model(x)
            loss = loss_function(x_hat, x, mu, logvar)
            train_loss += loss.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f'====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}')
    means, logvars, labels = list(), list(), list()
    with torch.no_grad():
        model.eval()
        test_loss = 0
        for x, y in test_loader:
            x = x.to(device)
            x_hat, mu, logvar = model(x)
            test_loss += loss_function(x_hat, x, mu, logvar).item()
            means.append(mu.detach())
            logvars.append(logvar.detach())
            labels.append(y.detach())
    codes['μ'].append(torch.cat(means))
    codes['logσ2'].append(torch.cat(logvars))
    codes['y'].append(torch.cat(labels))
    print(f'====> Test set loss: {test_loss / len(test_loader.dataset):.4f}')

import numpy as np
from sklearn.manifold import TSNE

X, Y, E = list(), list(), list()  # input, classes, embeddings
N = 200  # samples per epoch
epochs = (0, 2)
for epoch in epochs:
    X.append(codes['μ'][epoch][:N])
    E.append(TSNE(n_components=2).fit_transform(X[-1]))  # expect: DL204
    Y.append(codes['y'][epoch][:N])
print([e.shape for e in E], np.arange(10))
