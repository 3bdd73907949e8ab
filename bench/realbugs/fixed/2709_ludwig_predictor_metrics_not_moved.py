# source: https://github.com/ludwig-ai/ludwig/pull/3420
# fixed twin: the predictor moves the model's metrics to its device in __init__, as the trainer does (merged fix,
#             commit 78d4041).
import torch
import torch.nn as nn


def get_torch_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


class MeanMetric(nn.Module):
    """A small stand-in for torchmetrics.MeanMetric: its running state lives in buffers."""

    def __init__(self):
        super().__init__()
        self.register_buffer("mean_value", torch.tensor(0.0))
        self.register_buffer("weight", torch.tensor(0.0))

    def update(self, value):
        self.mean_value += value.sum()
        self.weight += value.numel()

    def compute(self):
        return self.mean_value / self.weight.clamp(min=1)


class ModuleWrapper:
    """Holds a module without registering it as a submodule."""

    def __init__(self, module):
        self.module = module


class BaseModel(nn.Module):
    def __init__(self, n_in=6, n_out=1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_out))
        self.loss_fn = nn.MSELoss()
        self._eval_loss_metric = ModuleWrapper(MeanMetric())

    def forward(self, x):
        return self.net(x)

    def metrics_to_device(self, device):
        self._eval_loss_metric.module = self._eval_loss_metric.module.to(device)

    @property
    def eval_loss_metric(self):
        return self._eval_loss_metric.module

    def update_metrics(self, targets, predictions):
        eval_loss = self.loss_fn(predictions, targets)
        self.eval_loss_metric.update(eval_loss)

    def get_metrics(self):
        return {"loss": self.eval_loss_metric.compute().item()}


class Trainer:
    def __init__(self, model):
        self.device = get_torch_device()
        self.model = model.to(self.device)
        self.model.metrics_to_device(self.device)


class Predictor:
    def __init__(self, model):
        device = get_torch_device()
        self.device = device
        self.dist_model = model.to(device)
        self.model = model
        self.model.metrics_to_device(device)

    def batch_evaluation(self, batches):
        self.dist_model.eval()
        with torch.no_grad():
            for inputs, targets in batches:
                preds = self.dist_model(inputs.to(self.device))
                self.model.update_metrics(targets.to(self.device), preds)
        return self.model.get_metrics()


if __name__ == "__main__":
    batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(3)]
    model = BaseModel()
    print(Predictor(model).batch_evaluation(batches))
