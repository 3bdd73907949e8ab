# source: https://github.com/baal-org/baal/pull/80
# fixed twin: commit 8c1b1e2 moves the model to the trainer's GPU (model.cuda(self.root_gpu)) before predicting
#             on the pool when self.on_gpu, and back to the CPU after the loop.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def to_cuda(data):
    if isinstance(data, (list, tuple)):
        return type(data)(to_cuda(d) for d in data)
    return data.cuda()


def map_on_tensor(fn, val):
    if isinstance(val, (list, tuple)):
        return [map_on_tensor(fn, v) for v in val]
    return fn(val)


def mc_inference(model, data, iterations, replicate_in_memory):
    if replicate_in_memory:
        input_shape = data.size()
        batch_size = input_shape[0]
        data = torch.stack([data] * iterations).view(iterations * batch_size, *input_shape[1:])
        out = model(data)
        return out.view(iterations, batch_size, *out.shape[1:]).permute(1, 2, 0)
    return torch.stack([model(data) for _ in range(iterations)], dim=-1)


class ActiveLearningMixin:
    def predict_step(self, data, batch_idx):
        return mc_inference(self, data, self.hparams["iterations"], self.hparams["replicate_in_memory"])


class VGG16(nn.Module, ActiveLearningMixin):
    def __init__(self, active_dataset, pool, hparams):
        super().__init__()
        self.active_dataset, self.pool, self.hparams = active_dataset, pool, hparams
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Linear(8, 10))

    def forward(self, x):
        return self.classifier(self.features(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

    def train_dataloader(self):
        return DataLoader(self.active_dataset, batch_size=8, shuffle=True)

    def pool_loader(self):
        return DataLoader(self.pool, batch_size=8)


class MiniTrainer:
    def __init__(self, max_epochs=1, gpus=None):
        self.max_epochs = max_epochs
        self.on_gpu = bool(gpus) and torch.cuda.is_available()
        self.root_gpu = 0 if self.on_gpu else None
        self.model = None

    def get_model(self):
        return self.model

    def fit(self, model):
        self.model = model
        device = torch.device("cuda", self.root_gpu) if self.on_gpu else torch.device("cpu")
        model.to(device)
        optimizer = model.configure_optimizers()
        model.train()
        for _ in range(self.max_epochs):
            for i, (x, y) in enumerate(model.train_dataloader()):
                loss = model.training_step((x.to(device), y.to(device)), i)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        model.cpu()


class BaalTrainer(MiniTrainer):
    def predict_on_dataset(self, *args, **kwargs):
        preds = list(self.predict_on_dataset_generator())
        return torch.cat(preds, dim=0)

    def predict_on_dataset_generator(self, *args, **kwargs):
        model = self.get_model()
        model.eval()
        if self.on_gpu:
            model.cuda(self.root_gpu)
        dataloader = self.model.pool_loader()
        if len(dataloader) == 0:
            return None
        for idx, (data, _) in enumerate(dataloader):
            if self.on_gpu:
                data = to_cuda(data)
            pred = self.model.predict_step(data, idx)
            yield map_on_tensor(lambda x: x.detach().cpu(), pred)
        # teardown, TODO customize this later?
        model.cpu()


if __name__ == "__main__":
    torch.manual_seed(0)
    labelled = TensorDataset(torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,)))
    pool = TensorDataset(torch.randn(20, 3, 16, 16), torch.zeros(20, dtype=torch.long))
    model = VGG16(labelled, pool, {"iterations": 4, "replicate_in_memory": True})
    trainer = BaalTrainer(max_epochs=1, gpus=1)
    for step in range(2):
        trainer.fit(model)
        predictions = trainer.predict_on_dataset()
        print(step, predictions.shape)
