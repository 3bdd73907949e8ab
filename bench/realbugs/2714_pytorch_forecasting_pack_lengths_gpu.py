# source: https://github.com/sktime/pytorch-forecasting/issues/135
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the base forecasting model packs the target sequences when the decoder lengths differ, handing
#      pack_padded_sequence the decoder lengths straight from the batch; the trainer has moved the whole batch
#      dict (lengths included) to the GPU, and since PyTorch 1.7 the lengths must be on the host. The maintainer's
#      fix (PR 169, commit f737752) passes x["decoder_lengths"].cpu(); that line is marked (DL201, as in the corpus's
#      other pack_padded_sequence lengths bugs: the lengths are on a device the operation rejects).
import torch
import torch.nn as nn
from torch.nn.utils import rnn


def move_to_device(batch, device):
    if isinstance(batch, dict):
        return {k: move_to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to_device(v, device) for v in batch)
    return batch.to(device)


class MAE(nn.Module):
    def forward(self, prediction, target):
        if isinstance(target, rnn.PackedSequence):
            target, lengths = rnn.pad_packed_sequence(target, batch_first=True)
            mask = torch.arange(target.size(1), device=target.device)[None, :] < lengths.to(target.device)[:, None]
        else:
            mask = torch.ones_like(target, dtype=torch.bool)
        return ((prediction - target).abs() * mask).sum() / mask.sum()


class BaseModel(nn.Module):
    def __init__(self, hidden=8, n_features=3):
        super().__init__()
        self.rnn = nn.LSTM(n_features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)
        self.loss = MAE()

    def forward(self, x):
        h, _ = self.rnn(x["decoder_cont"])
        return {"prediction": self.out(h).squeeze(-1)}

    def step(self, x, y, batch_idx, label="train"):
        if (x["decoder_lengths"] < x["decoder_lengths"].max()).any():
            y = rnn.pack_padded_sequence(y, lengths=x["decoder_lengths"], batch_first=True, enforce_sorted=False)  # expect: DL201
        out = self(x)
        loss = self.loss(out["prediction"], y)
        return {"loss": loss}, out

    def training_step(self, batch, batch_idx):
        x, y = batch
        log, _ = self.step(x, y, batch_idx, label="train")
        return log


def fit(model, batches, device, lr=1e-2):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for batch_idx, batch in enumerate(batches):
        batch = move_to_device(batch, device)
        optimizer.zero_grad()
        loss = model.training_step(batch, batch_idx)["loss"]
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    batches = []
    for _ in range(3):
        x = {"decoder_cont": torch.randn(4, 6, 3), "decoder_lengths": torch.tensor([6, 4, 5, 2])}
        batches.append((x, torch.randn(4, 6)))
    print(fit(BaseModel(), batches, device))
