# source: https://github.com/kitsuyaazuma/blazefl/pull/6
# error: RuntimeError: device mismatch between the input tensors and the model weights (PR title: "Fix Device Mismatch Between Input Tensor and Model")
# bug: the federated-averaging client trainer "moves" each batch with bare data.to(device) /
#      target.to(device) calls whose results are thrown away, and never moves its own model; the fix
#      rebinds the moved batch and inserts self.model.to(self.device) before the optimizer is built
#      (no rule covers a model that is never moved; DL203 is the closest, on the line it precedes).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class FedAvgClientTrainer:
    def __init__(self, model: nn.Module, device: str, epochs=1, batch_size=8, lr=0.1):
        self.model = model
        self.device = device
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.model.to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.lr)
        self.criterion = nn.CrossEntropyLoss()

    def train(self, model_parameters: torch.Tensor, dataset) -> torch.Tensor:
        torch.nn.utils.vector_to_parameters(model_parameters.to(self.device), self.model.parameters())
        loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True)
        self.model.train()
        for _ in range(self.epochs):
            for data, target in loader:
                data = data.to(self.device)
                target = target.to(self.device)
                output = self.model(data)
                loss = self.criterion(output, target)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        return torch.nn.utils.parameters_to_vector(self.model.parameters()).detach().cpu()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 3))
    trainer = FedAvgClientTrainer(model, device)
    dataset = TensorDataset(torch.randn(32, 10), torch.randint(0, 3, (32,)))
    global_params = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    print(trainer.train(global_params, dataset).shape)
