# source: https://github.com/fastai/fastai/pull/3395
# fixed twin: before_fit also sends loss_func to dls.device when it is an nn.Module, so its buffer follows the model.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DataLoaders:
    def __init__(self, xs, ys, bs=8, device=None):
        self.xs, self.ys, self.bs = xs, ys, bs
        self.device = device or torch.device("cpu")

    def __iter__(self):
        for i in range(0, len(self.xs), self.bs):
            yield self.xs[i:i + self.bs].to(self.device), self.ys[i:i + self.bs].to(self.device)


class Callback:
    def __init__(self):
        self.learn = None

    def __getattr__(self, name):
        return getattr(self.learn, name)


class TrainEvalCallback(Callback):
    def before_fit(self):
        self.learn.epoch, self.learn.train_iter = 0, 0
        if hasattr(self.dls, "device"):
            self.model.to(self.dls.device)
            if isinstance(self.loss_func, nn.Module):
                self.loss_func.to(self.dls.device)
        if hasattr(self.model, "reset"):
            self.model.reset()


class Learner:
    def __init__(self, dls, model, loss_func, lr=0.01, cbs=()):
        self.dls, self.model, self.loss_func, self.lr = dls, model, loss_func, lr
        self.cbs = [TrainEvalCallback(), *cbs]
        for cb in self.cbs:
            cb.learn = self

    def fit(self, n_epoch):
        self.opt = torch.optim.SGD(self.model.parameters(), lr=self.lr)
        for cb in self.cbs:
            if hasattr(type(cb), "before_fit"):
                cb.before_fit()
        for self.epoch in range(n_epoch):
            for xb, yb in self.dls:
                loss = self.loss_func(self.model(xb), yb)
                loss.backward()
                self.opt.step()
                self.opt.zero_grad()
                self.train_iter += 1
        return loss.item()


class LabelSmoothingWeighted(nn.Module):
    def __init__(self, class_weights, eps=0.1):
        super().__init__()
        self.register_buffer("weight", torch.as_tensor(class_weights, dtype=torch.float))
        self.eps = eps

    def forward(self, output, target):
        c = output.size(-1)
        log_preds = F.log_softmax(output, dim=-1)
        smooth = -(log_preds * self.weight).sum(dim=-1).mean() / c
        return smooth * self.eps + (1 - self.eps) * F.nll_loss(log_preds, target, weight=self.weight)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dls = DataLoaders(torch.randn(32, 10), torch.randint(0, 3, (32,)), device=device)
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    learn = Learner(dls, model, LabelSmoothingWeighted([1.0, 2.0, 0.5]))
    print(learn.fit(2))
