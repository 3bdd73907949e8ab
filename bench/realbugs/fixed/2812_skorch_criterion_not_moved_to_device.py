# source: https://github.com/skorch-dev/skorch/pull/455
# fixed twin: initialize_criterion moves the criterion (and its class weights) to self.device when it is an nn.Module.
import torch
import torch.nn as nn
import torch.nn.functional as F


class NeuralNet:
    def __init__(self, module, criterion, optimizer=torch.optim.SGD, lr=0.1, max_epochs=2, device="cpu", **kwargs):
        self.module, self.criterion, self.optimizer = module, criterion, optimizer
        self.lr, self.max_epochs, self.device = lr, max_epochs, device
        self.params = kwargs

    def get_params_for(self, prefix):
        prefix = prefix + "__"
        return {k[len(prefix):]: v for k, v in self.params.items() if k.startswith(prefix)}

    def initialize_module(self):
        self.module_ = self.module(**self.get_params_for("module"))
        self.module_ = self.module_.to(self.device)
        return self

    def initialize_criterion(self):
        criterion_params = self.get_params_for("criterion")
        self.criterion_ = self.criterion(**criterion_params)
        if isinstance(self.criterion_, torch.nn.Module):
            self.criterion_ = self.criterion_.to(self.device)
        return self

    def initialize(self):
        self.initialize_module()
        self.initialize_criterion()
        self.optimizer_ = self.optimizer(self.module_.parameters(), lr=self.lr)
        return self

    def get_loss(self, y_pred, y_true):
        y_true = y_true.to(y_pred.device)
        return self.criterion_(torch.log(y_pred), y_true)

    def train_step(self, Xi, yi):
        self.module_.train()
        self.optimizer_.zero_grad()
        y_pred = self.module_(Xi.to(self.device))
        loss = self.get_loss(y_pred, yi)
        loss.backward()
        self.optimizer_.step()
        return loss.item()

    def fit(self, X, y, batch_size=8):
        self.initialize()
        for _ in range(self.max_epochs):
            for start in range(0, len(X), batch_size):
                loss = self.train_step(X[start:start + batch_size], y[start:start + batch_size])
        return loss


class NeuralNetClassifier(NeuralNet):
    def __init__(self, module, criterion=nn.NLLLoss, **kwargs):
        super().__init__(module, criterion, **kwargs)


class ClassifierModule(nn.Module):
    def __init__(self, num_units=10):
        super().__init__()
        self.dense0 = nn.Linear(20, num_units)
        self.output = nn.Linear(num_units, 2)

    def forward(self, X):
        return F.softmax(self.output(F.relu(self.dense0(X))), dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    net = NeuralNetClassifier(
        ClassifierModule,
        device="cuda" if torch.cuda.is_available() else "cpu",
        criterion__weight=torch.tensor([0.3, 0.7]),
    )
    X, y = torch.randn(32, 20), torch.randint(0, 2, (32,))
    print(net.fit(X, y))
