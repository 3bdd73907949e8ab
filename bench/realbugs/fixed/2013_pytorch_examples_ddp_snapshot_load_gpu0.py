# source: https://github.com/pytorch/examples/issues/1078
# fixed twin: the snapshot is loaded with map_location set to this rank's GPU (the CPU without one), as PR 1079 does.
import os
import tempfile

import torch
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.gpu_id = int(os.environ.get("LOCAL_RANK", 0))
        self.device = torch.device("cuda", self.gpu_id) if torch.cuda.is_available() else torch.device("cpu")
        self.model = model.to(self.device)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.snapshot_path = snapshot_path
        self.epochs_run = 0
        if os.path.exists(snapshot_path):
            print("Loading snapshot")
            self._load_snapshot(snapshot_path)

    def _load_snapshot(self, snapshot_path):
        loc = f"cuda:{self.gpu_id}" if torch.cuda.is_available() else "cpu"
        snapshot = torch.load(snapshot_path, map_location=loc)
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(source), targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        for source, targets in self.train_data:
            self._run_batch(source.to(self.device), targets.to(self.device))

    def _save_snapshot(self, epoch):
        snapshot = {"MODEL_STATE": self.model.state_dict(), "EPOCHS_RUN": epoch}
        torch.save(snapshot, self.snapshot_path)

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    train_set = TensorDataset(torch.randn(64, 20), torch.randn(64, 1))
    model = torch.nn.Linear(20, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return train_set, model, optimizer


def main(save_every, total_epochs, batch_size, snapshot_path):
    dataset, model, optimizer = load_train_objs()
    train_data = DataLoader(dataset, batch_size=batch_size, shuffle=False)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "snapshot.pt")
    main(save_every=1, total_epochs=2, batch_size=16, snapshot_path=path)
    main(save_every=1, total_epochs=4, batch_size=16, snapshot_path=path)
