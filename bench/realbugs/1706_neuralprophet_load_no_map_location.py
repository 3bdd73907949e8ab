# source: https://github.com/ourownstory/neural_prophet/pull/1473
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the library's save() pickles the whole fitted forecaster (with its torch model) and its
#      load() restores it with a bare torch.load, so a forecaster fitted on a GPU cannot be loaded
#      on a CPU-only machine, and load() gives the caller no way to say where. The fix (PR 1473,
#      commit 7aac3beb) adds a map_location parameter to load() and passes it to torch.load; the
#      torch.load is marked (DL301). (weights_only=False only keeps the torch.load default of
#      the time, so that the whole-object pickle still loads on current torch.)
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


def load(path):
    m = torch.load(path, weights_only=False)  # expect: DL301
    m.restore_trainer()
    return m


def main():
    path = os.path.join(tempfile.mkdtemp(), "forecaster.np")
    fitted = Forecaster()  # fitted with a GPU accelerator in the reporter's setup
    save(fitted, path)
    m = load(path)
    print(m.predict(torch.arange(10.0)))


if __name__ == "__main__":
    main()
