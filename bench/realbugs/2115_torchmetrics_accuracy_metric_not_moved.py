# source: https://github.com/Lightning-AI/torchmetrics/issues/608
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (in the metric's update, though the reporter's predictions and labels are both on cuda:0)
# bug: the training loop creates an Accuracy metric inside the function and moves the model's
#      inputs to the GPU, but never moves the metric; a torchmetrics metric keeps its running
#      state (correct/total counts) as tensors of the module, on the CPU until .to(device), so its
#      update adds GPU counts into CPU state. The maintainers' answer (the #608 comment that
#      torchmetrics#1047 links: the metric must be on the same device as its inputs) is
#      metric = torchmetrics.Accuracy().to(device); the creation line is marked. DL201 (the CPU
#      state meets the GPU predictions) is the closest rule. torchmetrics is not installed here:
#      the Metric/Accuracy classes below stand in for it (states registered as buffers).
import torch
import torch.nn as nn


class Metric(nn.Module):
    def add_state(self, name, default):
        self.register_buffer(name, default.clone())

    def forward(self, preds, target):
        self.update(preds, target)
        return self.compute()


class Accuracy(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("correct", torch.tensor(0))
        self.add_state("total", torch.tensor(0))

    def update(self, preds, target):
        self.correct += (preds.argmax(dim=1) == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total


class AudioCNN(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 5, padding=2)
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean(dim=-1))


def train_loop(epoch, dataloader, model, loss_fn, optim, device="cuda:0"):
    model.train()
    epoch_loss = 0.0
    metric = Accuracy()  # expect: DL201
    for step, (img, label) in enumerate(dataloader):
        optim.zero_grad()
        img = img.to(device).float()
        label = label.to(device).long()
        yhat = model(img)
        train_loss = loss_fn(input=yhat, target=label)
        out = torch.softmax(yhat, dim=1)
        train_step_acc = metric(out, label)
        train_loss.backward()
        optim.step()
        epoch_loss += train_loss.item()
    return epoch_loss / (step + 1), float(metric.compute())


if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    model = AudioCNN().to(device)
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [(torch.randn(8, 1, 64), torch.randint(0, 4, (8,))) for _ in range(4)]
    print(train_loop(0, loader, model, nn.CrossEntropyLoss(), optim, device=device))
