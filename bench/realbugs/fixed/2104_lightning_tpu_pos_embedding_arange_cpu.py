# source: https://github.com/Lightning-AI/pytorch-lightning/issues/5437
# fixed twin: the positions are made on the module's device (device=self.device), as the answer says.
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
        pos = self.pos_embedding(torch.arange(0, 100, device=self.device).unsqueeze(0))
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
