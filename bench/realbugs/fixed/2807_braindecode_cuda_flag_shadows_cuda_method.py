# source: https://github.com/TNTLFreiburg/braindecode/issues/64
# fixed twin: the placement flag is renamed is_cuda (commit 730abfa), so it no longer shadows the cuda() method.
import torch as th
import torch.nn as nn


class BaseModel(object):
    def cuda(self):
        self._ensure_network_exists()
        assert not self.compiled, "Call cuda before compiling model, otherwise optimization will not work"
        self.network = self.network.cuda()
        self.is_cuda = True
        return self

    def parameters(self):
        self._ensure_network_exists()
        return self.network.parameters()

    def _ensure_network_exists(self):
        if not hasattr(self, "network"):
            self.network = self.create_network()
            self.is_cuda = False
            self.compiled = False

    def compile(self, loss, optimizer):
        self._ensure_network_exists()
        self.loss, self.optimizer = loss, optimizer
        self.compiled = True

    def fit(self, X, y, epochs=2):
        for _ in range(epochs):
            b_X, b_y = X, y
            if self.is_cuda:
                b_X, b_y = b_X.cuda(), b_y.cuda()
            loss = self.loss(self.network(b_X), b_y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


class ShallowFBCSPNet(BaseModel):
    def __init__(self, in_chans, n_classes, input_time_length):
        self.in_chans, self.n_classes, self.input_time_length = in_chans, n_classes, input_time_length

    def create_network(self):
        return nn.Sequential(
            nn.Conv1d(self.in_chans, 8, 5), nn.ELU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
            nn.Linear(8, self.n_classes),
        )


if __name__ == "__main__":
    th.manual_seed(0)
    cuda = th.cuda.is_available()
    model = ShallowFBCSPNet(in_chans=4, n_classes=2, input_time_length=50)
    optimizer = th.optim.AdamW(model.parameters(), lr=1e-3)
    if cuda:
        model.cuda()
    model.compile(loss=nn.functional.cross_entropy, optimizer=optimizer)
    print(model.fit(th.randn(6, 4, 50), th.randint(0, 2, (6,))))
