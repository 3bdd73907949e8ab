# source: https://github.com/freud14/poutyne/pull/25
# fixed twin: to(), cuda() and cpu() also move the loss function when it is a torch.nn.Module (PR 25, commit 85295cb), so the weighted loss's weight follows the network.
import torch
import torch.nn as nn


def torch_to(obj, device):
    if isinstance(obj, (list, tuple)):
        return type(obj)(torch_to(o, device) for o in obj)
    return obj.to(device)


class Model:
    def __init__(self, model, optimizer, loss_function):
        self.model = model
        self.optimizer = optimizer
        self.loss_function = loss_function
        self.device = None

    def _process_input(self, *args):
        if self.device is not None:
            args = torch_to(args, self.device)
        return args[0] if len(args) == 1 else args

    def _compute_loss_and_metrics(self, x, y):
        x, y = self._process_input(x, y)
        pred_y = self.model(x)
        loss = self.loss_function(pred_y, y)
        return loss, pred_y

    def train_on_batch(self, x, y):
        self.model.train(True)
        self.optimizer.zero_grad()
        loss, _ = self._compute_loss_and_metrics(x, y)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit_generator(self, train_generator, epochs=1):
        for epoch in range(epochs):
            losses = [self.train_on_batch(x, y) for x, y in train_generator]
            print("epoch", epoch, sum(losses) / len(losses))

    def cuda(self, *args, **kwargs):
        self.model.cuda(*args, **kwargs)
        if isinstance(self.loss_function, torch.nn.Module):
            self.loss_function.cuda(*args, **kwargs)
        self.device = None
        for _, p in zip(range(1), self.model.parameters()):
            self.device = p.device
        return self

    def cpu(self, *args, **kwargs):
        self.model.cpu(*args, **kwargs)
        if isinstance(self.loss_function, torch.nn.Module):
            self.loss_function.cpu(*args, **kwargs)
        self.device = None
        for _, p in zip(range(1), self.model.parameters()):
            self.device = p.device
        return self

    def to(self, device):
        self.device = device
        self.model.to(self.device)
        if isinstance(self.loss_function, torch.nn.Module):
            self.loss_function.to(self.device)
        return self


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    network = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(network.parameters(), lr=0.1)
    class_weights = torch.tensor([1.0, 2.0, 0.5])
    model = Model(network, optimizer, nn.CrossEntropyLoss(weight=class_weights))
    model.to(device)
    train = [(torch.randn(16, 8), torch.randint(0, 3, (16,))) for _ in range(4)]
    model.fit_generator(train, epochs=2)
