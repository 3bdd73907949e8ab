# source: https://github.com/tsugumi-sys/SA-ConvLSTM-Pytorch/pull/26
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!
# bug: the trainer moves the model to DEVICE and moves every training batch, but the validation
#      step takes one batch from the validation loader and feeds it to the model as it is (CPU).
from typing import Callable, Dict, Tuple

import torch
from torch import nn
from torch.utils.data import DataLoader

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


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
        self.model = model.to(DEVICE)
        self.train_epochs = train_epochs
        self.train_dataloader = train_dataloader
        self.valid_dataloader = valid_dataloader
        self.loss_criterion = loss_criterion
        self.accuracy_criterion = accuracy_criterion
        self.optimizer = optimizer

    def train(self) -> Dict:
        history = {"train_loss": [], "validation_loss": []}
        for epoch in range(self.train_epochs):
            self.model.train()
            for input, target in self.train_dataloader:
                input, target = input.to(DEVICE), target.to(DEVICE)
                output = self.model(input)
                loss = self.loss_criterion(output.flatten(), target.flatten())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            valid_loss, valid_acc = self.validation()
            history["train_loss"].append(loss.item())
            history["validation_loss"].append(valid_loss)
        return history

    def validation(self) -> Tuple[float, float]:
        self.model.eval()
        with torch.no_grad():
            input, target = next(iter(self.valid_dataloader))
            input, target = input.to(DEVICE), target.to(DEVICE)
            output = self.model(input)
            loss = self.loss_criterion(output.flatten(), target.flatten())
            acc = self.accuracy_criterion(output.flatten(), target.flatten())
        return loss.item(), acc.item()
