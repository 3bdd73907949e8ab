# source: https://github.com/TNTLFreiburg/braindecode/issues/64
# error: TypeError: 'bool' object is not callable (model.cuda() on a braindecode model whose network already exists)
# bug: BaseModel offers a cuda() method that moves the wrapped network to the GPU, but it records the placement in an
#      attribute of the same name: creating the network sets self.cuda = False and cuda() itself sets self.cuda = True,
#      so the instance attribute shadows the method. Once anything has built the network (here: the optimizer asks for
#      model.parameters()), model.cuda() calls a bool and the model can not be moved. The maintainer's commit 730abfa
#      renames the flag to is_cuda (the two assignments are marked; the flag's reads were renamed too). No rule covers a
#      device flag shadowing the move method; DL305 (a device predicate called, TypeError) is the closest.
import torch as th
import torch.nn as nn


class BaseModel(object):
    def cuda(self):
        self._ensure_network_exists()
        assert not self.compiled, "Call cuda before compiling model, otherwise optimization will not work"
        self.network = self.network.cuda()
        self.cuda = True  # expect: DL305
        return self

    def parameters(self):
        self._ensure_network_exists()
        return self.network.parameters()

    def _ensure_network_exists(self):
        if not hasattr(self, "network"):
            self.network = self.create_network()
            self.cuda = False  # expect: DL305
            self.compiled = False

    def compile(self, loss, optimizer):
        self._ensure_network_exists()
        self.loss, self.optimizer = loss, optimizer
        self.compiled = True

    def fit(self, X, y, epochs=2):
        for _ in range(epochs):
            b_X, b_y = X, y
            if self.cuda:
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
