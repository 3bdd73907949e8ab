# source: https://github.com/pytorch/examples/pull/1084
# error: (issue 1078) every rank's resumed snapshot is restored onto cuda:0, the GPU that rank 0 saved it from: extra memory on GPU 0 and, with a GPU 0 that is full or not visible, CUDA out of memory / invalid device ordinal
# bug: in the multi-node DDP tutorial each process moves its model to its local GPU, but resuming
#      from the snapshot (written by local rank 0) uses torch.load without map_location, so every
#      process deserialises the whole snapshot onto GPU 0 before copying it into its own model.
#      The fix (PR 1084, after PR 1079 did the same in multigpu_torchrun.py) maps the load to the
#      process's GPU; the changed line is marked (DL301). The merged line names self.gpu_id, which
#      this file's trainer does not define; the twin maps to the trainer's own device (its local
#      rank's GPU, the CPU here when no GPU is present).
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset


class Trainer:
    def __init__(self, model, train_data, optimizer, save_every, snapshot_path):
        self.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        self.global_rank = int(os.environ.get("RANK", 0))
        self.device = torch.device(f"cuda:{self.local_rank}" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            self._load_snapshot(snapshot_path)
        if dist.is_available() and dist.is_initialized():
            self.model = DDP(self.model, device_ids=[self.local_rank])

    def _load_snapshot(self, snapshot_path):
        snapshot = torch.load(snapshot_path)  # expect: DL301
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_epoch(self, epoch):
        for source, targets in self.train_data:
            source, targets = source.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(source), targets)
            loss.backward()
            self.optimizer.step()

    def _save_snapshot(self, epoch):
        module = self.model.module if isinstance(self.model, DDP) else self.model
        torch.save({"MODEL_STATE": module.state_dict(), "EPOCHS_RUN": epoch}, self.snapshot_path)

    def train(self, max_epochs):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.local_rank == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    data = TensorDataset(torch.randn(64, 20), torch.randn(64, 1))
    model = torch.nn.Linear(20, 1)
    return data, model, torch.optim.SGD(model.parameters(), lr=1e-3)


def main(save_every, total_epochs, snapshot_path):
    for run in range(2):
        dataset, model, optimizer = load_train_objs()
        trainer = Trainer(model, DataLoader(dataset, batch_size=16), optimizer, save_every, snapshot_path)
        trainer.train(total_epochs + run)


if __name__ == "__main__":
    main(1, 2, os.path.join(tempfile.mkdtemp(), "snapshot.pt"))
