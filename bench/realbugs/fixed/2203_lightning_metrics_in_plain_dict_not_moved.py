# source: https://github.com/Lightning-AI/pytorch-lightning/issues/4408
# fixed twin: the metrics are kept in an nn.ModuleDict (the maintainers' answer), so the trainer's move takes their state along.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Metric(nn.Module):
    def add_state(self, name, default):
        self.register_buffer(name, default)


class Accuracy(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("correct", torch.tensor(0))
        self.add_state("total", torch.tensor(0))

    def update(self, preds, target):
        self.correct += torch.sum(preds == target)
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(16, 4)
        self.metrics = nn.ModuleDict({"train_acc": Accuracy(), "val_acc": Accuracy()})

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch):
        x, y = batch
        logits = self(x)
        for name, metric in self.metrics.items():
            if name.startswith("train"):
                metric.update(logits.argmax(dim=1), y)
        return F.cross_entropy(logits, y)


def fit(model, batches):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        loss = model.training_step((x.to(device), y.to(device)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {name: m.compute().item() for name, m in model.metrics.items() if m.total > 0}


if __name__ == "__main__":
    data = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(3)]
    print(fit(LitClassifier(), data))
