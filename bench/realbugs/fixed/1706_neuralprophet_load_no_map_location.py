# source: https://github.com/ourownstory/neural_prophet/pull/1473
# fixed twin: load() takes map_location and passes it to torch.load, and the CPU-only caller passes "cpu", as PR 1473 (commit 7aac3beb) does (its test loads with map_location="cpu").
import os
import tempfile

import torch
import torch.nn as nn


class TimeNet(nn.Module):
    def __init__(self, n_lags, n_forecasts):
        super().__init__()
        self.ar = nn.Linear(n_lags, n_forecasts)
        self._trainer = None

    def forward(self, lags):
        return self.ar(lags)


class Forecaster:
    def __init__(self, n_lags=4, n_forecasts=2):
        self.n_lags = n_lags
        self.model = TimeNet(n_lags, n_forecasts)
        self.trainer = None

    def restore_trainer(self):
        self.trainer = object()
        self.model._trainer = self.trainer

    def predict(self, series):
        device = next(self.model.parameters()).device
        lags = series[-self.n_lags:].unsqueeze(0).to(device)
        with torch.no_grad():
            return self.model(lags).squeeze(0)


def save(forecaster, path):
    removed = {"trainer": forecaster.trainer, "_trainer": forecaster.model._trainer}
    forecaster.trainer = None
    forecaster.model._trainer = None
    try:
        torch.save(forecaster, path)
    finally:
        forecaster.trainer = removed["trainer"]
        forecaster.model._trainer = removed["_trainer"]


def load(path, map_location=None):
    if map_location is not None:
        map_location = torch.device(map_location)
    m = torch.load(path, map_location=map_location, weights_only=False)
    m.restore_trainer()
    return m


def main():
    path = os.path.join(tempfile.mkdtemp(), "forecaster.np")
    fitted = Forecaster()  # fitted with a GPU accelerator in the reporter's setup
    save(fitted, path)
    m = load(path, map_location="cpu")
    print(m.predict(torch.arange(10.0)))


if __name__ == "__main__":
    main()
