# source: https://github.com/Lightning-AI/pytorch-lightning/issues/5437
# error: RuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:69 : Check failed: xtensor ... Input tensor is not an XLA tensor: torch.LongTensor (training on a TPU with the TPU accelerator)
# bug: the LightningModule's forward looks up positional embeddings with torch.arange(0, 100)
#      made without a device; the trainer moved the module to the TPU, so the embedding table is
#      on the XLA device and its index on the CPU. The answer (confirmed by the reporter) passes
#      device=self.device to the arange. The line is marked (DL202: a factory without device=
#      meeting a submodule). Lightning is not installed here: the two classes below stand in for
#      LightningModule's device property and the trainer's move (CUDA stands in for the TPU).
import torch
import torch.nn as nn
import torch.nn.functional as F


class LightningModule(nn.Module):
    @property
    def device(self):
        return next(self.parameters()).device


class MNISTModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(28 * 28, 10)
        self.pos_embedding = nn.Embedding(100, 64)
        self.pos_head = nn.Linear(64, 10)

    def forward(self, x):
        pos = self.pos_embedding(torch.arange(0, 100).unsqueeze(0))  # expect: DL202
        return torch.relu(self.l1(x.view(x.size(0), -1))) + self.pos_head(pos.mean(dim=1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


class Trainer:
    def __init__(self, tpu_cores=None, max_epochs=1):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.max_epochs = max_epochs

    def fit(self, model, batches):
        model.to(self.device)
        optimizer = model.configure_optimizers()
        for _ in range(self.max_epochs):
            for i, (x, y) in enumerate(batches):
                loss = model.training_step((x.to(self.device), y.to(self.device)), i)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return loss.item()


if __name__ == "__main__":
    data = [(torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(3)]
    print(Trainer(tpu_cores=8).fit(MNISTModel(), data))
