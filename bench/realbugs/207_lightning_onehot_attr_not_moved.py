# source: https://github.com/Lightning-AI/pytorch-lightning/issues/3674
# error: self.tem stays on cpu while the LightningModule trains on the GPU (reported by printing its device)
# bug: a one-hot lookup table built in __init__ is assigned as a plain attribute; Lightning moves the
#      module to the GPU, but plain tensor attributes are not moved with it (register_buffer is needed).
import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from torch.utils.data import DataLoader, random_split
from torchvision import transforms
from torchvision.datasets import MNIST


class LitModel(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.seg = 20
        self.num_joints = 25
        self.tem = self.one_hot(self.seg, self.num_joints)
        self.tem = self.tem.permute(2, 0, 1)  # expect: DL103
        self.layer_1 = torch.nn.Linear(28 * 28, 128)
        self.layer_2 = torch.nn.Linear(128, 10)

    def one_hot(self, spa, tem) -> torch.Tensor:
        y = torch.arange(spa).unsqueeze(-1)
        y_onehot = torch.FloatTensor(spa, spa)
        y_onehot.zero_()
        y_onehot.scatter_(1, y, 1)
        y_onehot = y_onehot.unsqueeze(0)
        y_onehot = y_onehot.repeat(tem, 1, 1)
        return y_onehot

    def forward(self, x):
        print(self.tem.device)
        x = x.view(x.size(0), -1)
        x = F.relu(self.layer_1(x))
        return self.layer_2(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    dataset = MNIST(".", download=True, transform=transforms.ToTensor())
    train, val = random_split(dataset, [55000, 5000])
    trainer = pl.Trainer(gpus=1, max_epochs=1)
    trainer.fit(LitModel(), DataLoader(train, batch_size=32))
