# source: https://github.com/facebookresearch/fairchem/pull/250
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: main.py accepts --cpu and the trainer then builds its model on the CPU, but the trainer's
#      load_checkpoint reads the (GPU-trained) checkpoint with a bare torch.load, so predicting with
#      a released checkpoint on a CPU-only machine fails before the weights reach the model. The PR
#      passes a map_location to that torch.load when the trainer runs on the CPU; the line is marked
#      (DL301).
import argparse
import os
import tempfile

import torch
import torch.nn as nn


class EnergyModel(nn.Module):
    def __init__(self, num_atoms_features=8, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_atoms_features, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, atoms):
        return self.net(atoms).sum(dim=1)


class BaseTrainer:
    def __init__(self, model, cpu=False):
        self.cpu = cpu
        if torch.cuda.is_available() and not self.cpu:
            self.device = torch.device("cuda")
        else:
            self.device = torch.device("cpu")
            self.cpu = True
        self.model = model.to(self.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)

    def save(self, checkpoint_path):
        torch.save({"state_dict": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}, checkpoint_path)

    def load_checkpoint(self, checkpoint_path):
        if not os.path.isfile(checkpoint_path):
            raise FileNotFoundError(checkpoint_path)
        checkpoint = torch.load(checkpoint_path)  # expect: DL301
        self.model.load_state_dict(checkpoint["state_dict"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])

    @torch.no_grad()
    def predict(self, batch):
        self.model.eval()
        return self.model(batch.to(self.device)).cpu()


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="predict")
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args(argv)

    checkpoint = args.checkpoint
    if checkpoint is None:
        checkpoint = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
        BaseTrainer(EnergyModel()).save(checkpoint)
    trainer = BaseTrainer(EnergyModel(), cpu=args.cpu)
    trainer.load_checkpoint(checkpoint)
    if args.mode == "predict":
        print(trainer.predict(torch.randn(3, 5, 8)))


if __name__ == "__main__":
    main()
