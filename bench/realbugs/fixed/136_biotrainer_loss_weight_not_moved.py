# source: https://github.com/sacdallago/biotrainer/pull/62
# error: RuntimeError: Expected all tensors to be on the same device (training on cuda with class weights)
# bug: get_loss builds CrossEntropyLoss with the CPU class-weight tensor computed by the target manager and
#      never moves the criterion; the solver moves the network and every batch to the GPU.
from typing import Optional, Union

import numpy as np
import torch
import torch.nn as nn

__LOSSES = {
    'sequence_to_class': {
        'cross_entropy_loss': lambda **kwargs: nn.CrossEntropyLoss(**kwargs, ignore_index=-100)
    },
    'sequence_to_value': {
        'mean_squared_error': lambda **kwargs: nn.MSELoss(**kwargs)
    }
}


def get_loss(protocol: str, loss_choice: str, device: Union[str, torch.device],
             weight: Optional[torch.Tensor] = None):
    loss = __LOSSES.get(protocol).get(loss_choice)
    if not loss:
        raise NotImplementedError
    else:
        if weight is not None:
            return loss(weight=weight).to(device)
        else:
            return loss().to(device)


class TargetManager:
    def __init__(self, labels):
        self.labels = np.asarray(labels)

    def compute_class_weights(self) -> torch.FloatTensor:
        counts = np.bincount(self.labels)
        class_weights = len(self.labels) / (len(counts) * counts)
        return torch.FloatTensor(class_weights)


class Solver:
    def __init__(self, network, optimizer, loss_function, device):
        self.device = device
        self.network = network.to(device)
        self.optimizer = optimizer
        self.loss_function = loss_function

    def train_epoch(self, loader):
        self.network.train()
        for seq_ids, X, y in loader:
            X, y = X.to(self.device), y.to(self.device)
            self.optimizer.zero_grad()
            prediction = self.network(X)
            loss = self.loss_function(prediction, y)
            loss.backward()
            self.optimizer.step()


def training_and_evaluation_routine(model, train_loader, labels, protocol='sequence_to_class',
                                    loss_choice='cross_entropy_loss', use_class_weights=True,
                                    device=torch.device('cuda'), num_epochs=10):
    target_manager = TargetManager(labels)
    class_weights = target_manager.compute_class_weights() if use_class_weights else None
    loss_function = get_loss(protocol=protocol, loss_choice=loss_choice, device=device, weight=class_weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    solver = Solver(model, optimizer, loss_function, device)
    for epoch in range(num_epochs):
        solver.train_epoch(train_loader)
