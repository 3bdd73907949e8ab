# source: https://github.com/metatensor/metatrain/issues/312
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
#        ("when trying to export a model that was checkpointed on CUDA in a CPU-only environment")
# bug: the soap_bpnn Trainer moves the model to the training device (model.to(device=device, dtype=dtype), a CUDA
#      device on a GPU node) and save_checkpoint stores model.state_dict() as it is, so the checkpoint holds CUDA
#      storages. SoapBpnn.load_checkpoint (reached from `mtt export` through utils/io.load_model) and
#      Trainer.load_checkpoint (a restart) read it with torch.load(path, weights_only=False), which restores the
#      storages on the device they were saved from and fails where there is no GPU. The fix (PR #381, commit
#      f6d4b64 "Map location when using torch.load for checkpoints") adds map_location="cpu" to both (and to the
#      same calls of the alchemical and PET architectures); the two soap_bpnn lines are marked (DL301). Reductions:
#      the rascaline SOAP calculator, the per-species MLPs and the metatensor outputs become one Linear over a
#      descriptor vector; dataset_info is a dict; the training loop keeps the device choice, the optimizer and
#      the epoch bookkeeping on random data; export() and load_model's architecture import are cut to a direct
#      call. The driver trains and checkpoints (on the GPU node), then loads the checkpoint as export does.
import os
import tempfile
from pathlib import Path
from typing import Dict, List, Union

import torch


# --- src/metatrain/experimental/soap_bpnn/model.py ---
class SoapBpnn(torch.nn.Module):
    __supported_devices__ = ["cuda", "cpu"]
    __supported_dtypes__ = [torch.float64, torch.float32]

    def __init__(self, model_hypers: Dict, dataset_info: Dict) -> None:
        super().__init__()
        self.hypers = model_hypers
        self.dataset_info = dataset_info
        self.layernorm = torch.nn.LayerNorm(self.hypers["soap_size"])
        self.bpnn = torch.nn.Sequential(
            torch.nn.Linear(self.hypers["soap_size"], self.hypers["num_neurons_per_layer"]),
            torch.nn.SiLU(),
            torch.nn.Linear(self.hypers["num_neurons_per_layer"], len(dataset_info["targets"])),
        )

    def forward(self, descriptors: torch.Tensor) -> torch.Tensor:
        return self.bpnn(self.layernorm(descriptors)).sum(dim=0)

    @classmethod
    def load_checkpoint(cls, path: Union[str, Path]) -> "SoapBpnn":

        # Load the checkpoint
        checkpoint = torch.load(path, weights_only=False)  # expect: DL301
        model_hypers = checkpoint["model_hypers"]
        model_state_dict = checkpoint["model_state_dict"]

        # Create the model
        model = cls(**model_hypers)
        dtype = next(iter(model_state_dict.values())).dtype
        model.to(dtype).load_state_dict(model_state_dict)

        return model


# --- src/metatrain/experimental/soap_bpnn/trainer.py ---
class Trainer:
    def __init__(self, train_hypers):
        self.hypers = train_hypers
        self.optimizer_state_dict = None
        self.scheduler_state_dict = None
        self.epoch = None

    def train(self, model: SoapBpnn, dtype: torch.dtype, devices: List[torch.device], train_datasets):
        device = devices[0]  # only one device, as we don't support multi-gpu for now
        # Move the model to the device and dtype:
        model.to(device=device, dtype=dtype)
        optimizer = torch.optim.Adam(model.parameters(), lr=self.hypers["learning_rate"])
        if self.optimizer_state_dict is not None:
            optimizer.load_state_dict(self.optimizer_state_dict)
        start_epoch = 0 if self.epoch is None else self.epoch + 1
        for epoch in range(start_epoch, start_epoch + self.hypers["num_epochs"]):
            for descriptors, energy in train_datasets:
                descriptors, energy = descriptors.to(device, dtype), energy.to(device, dtype)
                optimizer.zero_grad()
                loss = (model(descriptors) - energy).pow(2).sum()
                loss.backward()
                optimizer.step()
            self.epoch = epoch
        self.optimizer_state_dict = optimizer.state_dict()

    def save_checkpoint(self, model, path: Union[str, Path]):
        checkpoint = {
            "model_hypers": {
                "model_hypers": model.hypers,
                "dataset_info": model.dataset_info,
            },
            "model_state_dict": model.state_dict(),
            "train_hypers": self.hypers,
            "epoch": self.epoch,
            "optimizer_state_dict": self.optimizer_state_dict,
            "scheduler_state_dict": self.scheduler_state_dict,
        }
        torch.save(checkpoint, path)

    @classmethod
    def load_checkpoint(cls, path: Union[str, Path], train_hypers) -> "Trainer":

        # Load the checkpoint
        checkpoint = torch.load(path, weights_only=False)  # expect: DL301
        model_hypers = checkpoint["model_hypers"]
        model_state_dict = checkpoint["model_state_dict"]
        epoch = checkpoint["epoch"]
        optimizer_state_dict = checkpoint["optimizer_state_dict"]
        scheduler_state_dict = checkpoint["scheduler_state_dict"]

        # Create the trainer
        trainer = cls(train_hypers)
        trainer.optimizer_state_dict = optimizer_state_dict
        trainer.scheduler_state_dict = scheduler_state_dict
        trainer.epoch = epoch

        # Create the model
        model = SoapBpnn(**model_hypers)
        model.load_state_dict(model_state_dict)

        return trainer


# --- driver: `mtt train` on a GPU node, then `mtt export model.ckpt` where there is none ---
if __name__ == "__main__":
    model_hypers = {"soap_size": 16, "num_neurons_per_layer": 32}
    train_hypers = {"learning_rate": 1e-3, "num_epochs": 2}
    dataset_info = {"targets": ["energy"], "atomic_types": [1, 6, 8]}
    devices = [torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")]
    model = SoapBpnn(model_hypers, dataset_info)
    trainer = Trainer(train_hypers)
    train_datasets = [(torch.randn(5, 16), torch.randn(1)) for _ in range(4)]
    trainer.train(model, torch.float64, devices, train_datasets)
    path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    trainer.save_checkpoint(model, path)

    exported = SoapBpnn.load_checkpoint(path)
    restarted = Trainer.load_checkpoint(path, train_hypers)
    print(type(exported).__name__, restarted.epoch)
