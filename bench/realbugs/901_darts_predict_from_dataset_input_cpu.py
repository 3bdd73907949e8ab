# source: https://github.com/unit8co/darts/issues/381
# error: RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _thnn_conv2d_forward
# bug: a TCN forecasting model fitted on the GPU fails in predict() / historical_forecasts(): the
#      forecasting base class moves its network to self.device and moves the training batches, but
#      predict_from_dataset takes the input window of each inference batch from the DataLoader as is
#      (CPU) and feeds it to the CUDA network. The fix (darts PR 388, merged three days after the
#      issue, which names the same cause for the RNN example) adds .to(self.device) on that line; it is
#      marked (DL203).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class TCNModule(nn.Module):
    def __init__(self, input_size=1, kernel_size=3, num_filters=8, output_chunk_length=1):
        super().__init__()
        self.conv1 = nn.Conv1d(input_size, num_filters, kernel_size, padding=kernel_size - 1)
        self.conv2 = nn.Conv1d(num_filters, input_size, kernel_size, padding=kernel_size - 1)
        self.output_chunk_length = output_chunk_length

    def forward(self, x):
        # x: (batch, time, features)
        y = torch.relu(self.conv1(x.transpose(1, 2)))[..., : x.shape[1]]
        y = self.conv2(y)[..., : x.shape[1]]
        return y.transpose(1, 2)[:, -self.output_chunk_length :, :]


class TrainingWindows(Dataset):
    def __init__(self, series, input_chunk_length):
        self.series = series
        self.input_chunk_length = input_chunk_length

    def __len__(self):
        return len(self.series) - self.input_chunk_length

    def __getitem__(self, idx):
        window = self.series[idx : idx + self.input_chunk_length + 1]
        return window[:-1].unsqueeze(-1), window[-1:].unsqueeze(-1)


class InferenceWindows(Dataset):
    def __init__(self, series_list, input_chunk_length):
        self.series_list = series_list
        self.input_chunk_length = input_chunk_length

    def __len__(self):
        return len(self.series_list)

    def __getitem__(self, idx):
        return (self.series_list[idx][-self.input_chunk_length :].unsqueeze(-1),)


class TorchForecastingModel:
    def __init__(self, input_chunk_length=12, batch_size=8, n_epochs=2):
        self.input_chunk_length = input_chunk_length
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.model = None

    def fit(self, series):
        self.model = TCNModule().to(self.device)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)
        loader = DataLoader(TrainingWindows(series, self.input_chunk_length), batch_size=self.batch_size, shuffle=True)
        for _ in range(self.n_epochs):
            for train_x, train_y in loader:
                train_x, train_y = train_x.to(self.device), train_y.to(self.device)
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.model(train_x), train_y)
                loss.backward()
                optimizer.step()
        return self

    def predict(self, n, series):
        return self.predict_from_dataset(n, InferenceWindows([series], self.input_chunk_length))[0]

    def predict_from_dataset(self, n, dataset):
        loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=False)
        predictions = []
        self.model.eval()
        with torch.no_grad():
            for batch_tuple in loader:
                input_series = batch_tuple[0]  # expect: DL203
                predictions.extend(self._predict_batch(n, input_series))
        return predictions

    def _predict_batch(self, n, input_series):
        outputs = []
        for _ in range(n):
            out = self.model(input_series)
            outputs.append(out)
            input_series = torch.cat([input_series[:, 1:, :], out], dim=1)
        return list(torch.cat(outputs, dim=1).cpu())


if __name__ == "__main__":
    series = torch.sin(torch.linspace(0, 12, 120))
    model = TorchForecastingModel().fit(series[:100])
    print(model.predict(6, series[:100]).squeeze(-1))
