# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2623
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the Conv1d encoder layers live in a plain Python list, so when Lightning moves the model
#      to the GPU only the fully connected layers follow; the first convolution gets a CUDA
#      batch and CPU weights.
import math

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv1DClassifier(nn.Module):
    def __init__(self, num_classes):
        super(Conv1DClassifier, self).__init__()
        encoder_out_channels = 256
        n_layers = int(math.log2(encoder_out_channels))
        self.conv_layers = []  # expect: DL105
        for layer_idx in range(n_layers):
            self.conv_layers.append(
                nn.Conv1d(in_channels=2 ** layer_idx, out_channels=2 ** (layer_idx + 1), kernel_size=3, padding=1)
            )
        self.fc1 = nn.Linear(encoder_out_channels, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, num_classes)

    def forward(self, x):
        for conv_layer in self.conv_layers:
            x = F.relu(conv_layer(x))
        x = x.mean(dim=2)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LitClassifier(pl.LightningModule):
    def __init__(self, num_classes):
        super().__init__()
        self.model = Conv1DClassifier(num_classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.model(x), y)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
