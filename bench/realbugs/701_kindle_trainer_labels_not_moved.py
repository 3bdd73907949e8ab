# source: https://github.com/JeiKeiLim/kindle/pull/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (loss on the CUDA model output and the CPU labels)
# bug: the generic trainer moves only the images of each batch to its device, inline in the model call;
#      the labels stay on the CPU and meet the CUDA output in the criterion and in the accuracy count,
#      in training and in testing. The fix moves data and labels together before the model call (the
#      lines it changed are marked; no rule covers labels left behind, DL203 is the closest).
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, criterion, optimizer, device="cpu"):
        if isinstance(device, str):
            device = torch.device(device)
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device

    def train(self, loader, n_epoch=1):
        correct, total, running = 0, 0, 0.0
        for _ in range(n_epoch):
            for data, labels in loader:
                self.optimizer.zero_grad()
                model_out = self.model(data.to(self.device))  # expect: DL203
                loss = self.criterion(model_out, labels)
                loss.backward()
                self.optimizer.step()
                _, predicted = torch.max(model_out, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
                running += loss.item()
        return running, correct / max(total, 1)

    @torch.no_grad()
    def test(self, loader):
        correct, total, running = 0, 0, 0.0
        for data, labels in loader:
            model_out = self.model(data.to(self.device))  # expect: DL203
            running += self.criterion(model_out, labels).item()
            _, predicted = torch.max(model_out, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
        return running, correct / max(total, 1)


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10)).to(device)
    data = TensorDataset(torch.randn(32, 3, 8, 8), torch.randint(0, 10, (32,)))
    loader = DataLoader(data, batch_size=8)
    trainer = Trainer(model, nn.CrossEntropyLoss(), optim.SGD(model.parameters(), lr=0.1), device)
    print(trainer.train(loader), trainer.test(loader))
