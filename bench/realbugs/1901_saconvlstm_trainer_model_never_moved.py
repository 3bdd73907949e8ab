# source: https://github.com/tsugumi-sys/SA-ConvLSTM-Pytorch/pull/25
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the project's Trainer takes the model built by the pipeline script and keeps it as it is
#      (on the CPU), while its training loop moves every input/target batch to the shared DEVICE
#      constant (the GPU when there is one); the first forward meets CUDA inputs with CPU weights.
#      The fix (PR 25, commit 5aa2d22) stores model.to(DEVICE) in __init__; the changed line is
#      marked (DL201: a module called on an argument on another device - the model never moved,
#      its inputs moved). The validation step's own unmoved batch, fixed later in PR 26 (corpus
#      001), is left out here: validation moves its batch.
from typing import Callable, Dict, Tuple

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TinySeq2Seq(nn.Module):
    def __init__(self, channels=1, hidden=4):
        super().__init__()
        self.encode = nn.Conv2d(channels, hidden, 3, padding=1)
        self.decode = nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, x):
        b, t, c, h, w = x.shape
        y = self.decode(torch.relu(self.encode(x.reshape(b * t, c, h, w))))
        return torch.sigmoid(y).reshape(b, t, c, h, w)


class Trainer:
    def __init__(
        self,
        model: nn.Module,
        train_epochs: int,
        train_dataloader: DataLoader,
        valid_dataloader: DataLoader,
        loss_criterion: nn.Module,
        accuracy_criterion: Callable,
        optimizer: torch.optim.Optimizer,
    ) -> None:
        self.model = model  # expect: DL201
        self.train_epochs = train_epochs
        self.train_dataloader = train_dataloader
        self.valid_dataloader = valid_dataloader
        self.loss_criterion = loss_criterion
        self.accuracy_criterion = accuracy_criterion
        self.optimizer = optimizer

    def run(self) -> Dict:
        results = {"train_loss": [], "validation_loss": []}
        for _ in range(self.train_epochs):
            self.model.train()
            train_loss = 0.0
            for inputs, target in self.train_dataloader:
                inputs, target = inputs.to(DEVICE), target.to(DEVICE)
                output = self.model(inputs)
                loss = self.loss_criterion(output.flatten(), target.flatten())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                train_loss += loss.item()
            valid_loss, _ = self.validation()
            results["train_loss"].append(train_loss / len(self.train_dataloader))
            results["validation_loss"].append(valid_loss)
        return results

    def validation(self) -> Tuple[float, float]:
        self.model.eval()
        with torch.no_grad():
            inputs, target = next(iter(self.valid_dataloader))
            inputs, target = inputs.to(DEVICE), target.to(DEVICE)
            output = self.model(inputs)
            loss = self.loss_criterion(output.flatten(), target.flatten())
            acc = self.accuracy_criterion(output.flatten(), target.flatten())
        return loss.item(), acc.item()


def loaders():
    frames = torch.rand(8, 3, 1, 8, 8)
    following = torch.rand(8, 3, 1, 8, 8)
    dataset = TensorDataset(frames, following)
    return DataLoader(dataset, batch_size=4), DataLoader(dataset, batch_size=4)


def main():
    model = TinySeq2Seq()
    train_loader, valid_loader = loaders()
    trainer = Trainer(
        model=model,
        train_epochs=2,
        train_dataloader=train_loader,
        valid_dataloader=valid_loader,
        loss_criterion=nn.MSELoss(),
        accuracy_criterion=lambda a, b: 1 - (a - b).abs().mean(),
        optimizer=torch.optim.Adam(model.parameters(), lr=5e-4),
    )
    print(trainer.run())


if __name__ == "__main__":
    main()
