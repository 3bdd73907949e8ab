# source: https://github.com/freud14/poutyne/pull/25
# error: RuntimeError: Expected object of backend CUDA but got backend CPU (the weighted loss's weight on the CPU; the PR does not quote the message)
# bug: the framework's Model wraps a network, an optimizer and a loss function; its to(device),
#      cuda() and cpu() move the network and record the device its batches are moved to, but
#      leave the loss function where it was built. A loss that is a module holding tensors - here
#      a class-weighted cross entropy - keeps its weight on the host, and the first training batch
#      fails inside the loss. The merged fix (commit 85295cb) also moves the loss function when it
#      is a torch.nn.Module, in to(), cuda() and cpu(); it only inserts lines, so the marker is on
#      the line the traceback points to, the loss call (DL104: a loss whose weight= stays on the
#      CPU while the model and data are moved).
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
        loss = self.loss_function(pred_y, y)  # expect: DL104
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
        self.device = None
        for _, p in zip(range(1), self.model.parameters()):
            self.device = p.device
        return self

    def cpu(self, *args, **kwargs):
        self.model.cpu(*args, **kwargs)
        self.device = None
        for _, p in zip(range(1), self.model.parameters()):
            self.device = p.device
        return self

    def to(self, device):
        self.device = device
        self.model.to(self.device)
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
