# source: https://github.com/Lightning-AI/pytorch-lightning/pull/554
# error: RuntimeError: Expected all tensors to be on the same device (Adagrad.step: the accumulator state_sum is on the CPU, the gradients on the GPU) when training a module whose configure_optimizers returns Adagrad on one GPU
# bug: the trainer's fit() asks the module for its optimizers first and only afterwards, in the
#      single-GPU branch, moves the module to the GPU. Adagrad creates its per-parameter
#      accumulators eagerly in its constructor, on the device the parameters are on then (the
#      CPU), so its first step mixes CPU state with GPU gradients (Adam works: its state is
#      created lazily). The fix (PR 554, as its description says) moves the model to the GPU
#      before the optimizers are created; the optimizer-creation line in fit() is marked (DL407:
#      optimizer state made by Adagrad before the model is moved).
import torch
import torch.nn as nn
import torch.nn.functional as F


class LightningModule(nn.Module):
    def configure_optimizers(self):
        raise NotImplementedError


class Trainer:
    def __init__(self, gpus=None, max_epochs=1):
        self.gpus = gpus
        self.single_gpu = gpus == 1 and torch.cuda.is_available()
        self.root_gpu = 0
        self.max_epochs = max_epochs

    def init_optimizers(self, optimizers):
        if isinstance(optimizers, torch.optim.Optimizer):
            return [optimizers]
        return list(optimizers)

    def fit(self, model, batches):
        self.optimizers = self.init_optimizers(model.configure_optimizers())  # expect: DL407
        if self.single_gpu:
            self.single_gpu_train(model, batches)
        else:
            self.run_pretrain_routine(model, batches, torch.device("cpu"))

    def single_gpu_train(self, model, batches):
        model.cuda(self.root_gpu)
        self.run_pretrain_routine(model, batches, torch.device("cuda", self.root_gpu))

    def run_pretrain_routine(self, model, batches, device):
        for epoch in range(self.max_epochs):
            for x, y in batches:
                x, y = x.to(device), y.to(device)
                loss = model.training_step((x, y))
                for opt in self.optimizers:
                    opt.zero_grad()
                loss.backward()
                for opt in self.optimizers:
                    opt.step()
        self.last_loss = loss.item()


class Classifier(LightningModule):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(12, 3)

    def training_step(self, batch):
        x, y = batch
        return F.cross_entropy(self.l1(x), y)

    def configure_optimizers(self):
        return torch.optim.Adagrad(self.parameters(), lr=0.1)


def main():
    batches = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(4)]
    trainer = Trainer(gpus=1, max_epochs=2)
    trainer.fit(Classifier(), batches)
    print(round(trainer.last_loss, 3))


if __name__ == "__main__":
    main()
