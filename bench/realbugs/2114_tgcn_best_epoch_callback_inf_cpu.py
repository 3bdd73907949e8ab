# source: https://github.com/lehaifeng/T-GCN/issues/56
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (best_epoch.py, line 51, in on_validation_batch_end: if monitor_op(monitor_value, self.best_value))
# bug: the T-GCN example's best-epoch callback starts its best value at a class-level
#      torch.tensor(inf) on the CPU and compares it with the monitored metric that the trainer
#      logged from the GPU model; after a Lightning/torchmetrics upgrade that metric is a GPU
#      tensor and the comparison fails (the reporter's workaround moves it to the CPU). The
#      maintainer's fix (commit a734e49) compares monitor_value.type_as(self.best_value), which
#      brings it to the CPU; that line is marked (DL201: the CPU best value meets the GPU metric).
#      Lightning is not installed here: Callback and the trainer below are minimal stand-ins.
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Callback:
    pass


class BestEpochCallback(Callback):
    TORCH_INF = torch_inf = torch.tensor(math.inf)
    MODE_DICT = {"min": (torch_inf, "min"), "max": (-torch_inf, "max")}
    MONITOR_OP_DICT = {"min": torch.lt, "max": torch.gt}

    def __init__(self, monitor="", mode="min"):
        self.monitor = monitor
        self.best_value, self.mode = self.MODE_DICT[mode]
        self.best_epoch = 0

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        if (trainer.current_epoch + 1) % trainer.check_val_every_n_epoch != 0:
            return
        monitor_op = self.MONITOR_OP_DICT[self.mode]
        metrics_dict = copy.copy(trainer.callback_metrics)
        monitor_value = metrics_dict.get(self.monitor, self.best_value)
        if monitor_op(monitor_value, self.best_value):  # expect: DL201
            self.best_value = monitor_value
            self.best_epoch = trainer.current_epoch


class GRUForecaster(nn.Module):
    def __init__(self, nodes=5, hidden=8):
        super().__init__()
        self.gru = nn.GRU(nodes, hidden, batch_first=True)
        self.head = nn.Linear(hidden, nodes)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out[:, -1])


class Trainer:
    def __init__(self, callbacks, max_epochs=3, check_val_every_n_epoch=1):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.callbacks = callbacks
        self.max_epochs = max_epochs
        self.check_val_every_n_epoch = check_val_every_n_epoch
        self.callback_metrics = {}

    def fit(self, model, train_batches, val_batches):
        model.to(self.device)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        for self.current_epoch in range(self.max_epochs):
            for x, y in train_batches:
                loss = F.mse_loss(model(x.to(self.device)), y.to(self.device))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            with torch.no_grad():
                for i, (x, y) in enumerate(val_batches):
                    self.callback_metrics["val_loss"] = F.mse_loss(model(x.to(self.device)), y.to(self.device))
                    for cb in self.callbacks:
                        cb.on_validation_batch_end(self, model, None, (x, y), i, 0)


if __name__ == "__main__":
    data = [(torch.randn(4, 6, 5), torch.randn(4, 5)) for _ in range(3)]
    best = BestEpochCallback(monitor="val_loss", mode="min")
    Trainer([best]).fit(GRUForecaster(), data[:2], data[2:])
    print(best.best_epoch, float(best.best_value))
