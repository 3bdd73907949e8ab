# source: https://github.com/unit8co/darts/issues/436
# fixed twin: the collate function leaves batches on the host (so they can be pinned) and the training loop moves each batch to the device (commit 7ebdd90).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SequentialDataset(Dataset):
    def __init__(self, series, input_len=6, output_len=2):
        self.series = series
        self.input_len, self.output_len = input_len, output_len

    def __len__(self):
        return len(self.series) - self.input_len - self.output_len + 1

    def __getitem__(self, idx):
        past = self.series[idx:idx + self.input_len]
        future = self.series[idx + self.input_len:idx + self.input_len + self.output_len]
        return past.unsqueeze(-1), future.unsqueeze(-1)


class RNNModule(nn.Module):
    def __init__(self, hidden=8, output_len=2):
        super().__init__()
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, output_len)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1]).unsqueeze(-1)


class TorchForecastingModel:
    def __init__(self, batch_size=4, n_epochs=2):
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.model = RNNModule().to(self.device)
        self.batch_size, self.n_epochs = batch_size, n_epochs
        self.criterion = nn.MSELoss()

    def _batch_collate_fn(self, batch):
        aggregated = []
        first_sample = batch[0]
        for i in range(len(first_sample)):
            aggregated.append(torch.stack([sample[i] for sample in batch], dim=0))
        return tuple(aggregated)

    def _batch_to_device(self, batch):
        return tuple(elem.to(self.device) if isinstance(elem, torch.Tensor) else elem for elem in batch)

    def fit(self, series):
        train_loader = DataLoader(SequentialDataset(series), batch_size=self.batch_size, shuffle=True,
                                  num_workers=0, pin_memory=True, drop_last=False,
                                  collate_fn=self._batch_collate_fn)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)
        for _ in range(self.n_epochs):
            for train_batch in train_loader:
                self.model.train()
                train_batch = self._batch_to_device(train_batch)
                output = self.model(train_batch[0])
                loss = self.criterion(output, train_batch[-1])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        return float(loss)


if __name__ == "__main__":
    series = torch.sin(torch.arange(40, dtype=torch.float32) / 3)
    print(round(TorchForecastingModel().fit(series), 4))
