# source: https://github.com/abhishekkrthakur/tez/pull/18
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False (Model.load(path, device="cpu") of weights saved during GPU training)
# bug: the trainer's Model.load takes a device, moves the model there, and then restores the
#      saved dict with a bare torch.load, which puts the tensors back on the device they were saved
#      from: a model trained on a GPU cannot be loaded with device="cpu" on a CPU-only machine
#      (and on a GPU machine the state dict is first placed on the GPU it was saved from). The PR
#      (closed; the maintainer's commit 0f74bd6 the same day makes the change) loads with
#      map_location=torch.device(device); that torch.load is marked (DL301).
import os
import tempfile

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.optimizer = None
        self.scheduler = None
        self.device = None

    def save(self, model_path):
        model_dict = {
            "state_dict": self.state_dict(),
            "optimizer": self.optimizer.state_dict() if self.optimizer is not None else None,
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
        }
        torch.save(model_dict, model_path)

    def load(self, model_path, device="cuda"):
        self.device = device
        if next(self.parameters()).device != self.device:
            self.to(self.device)
        model_dict = torch.load(model_path)  # expect: DL301
        self.load_state_dict(model_dict["state_dict"])

    def predict_one(self, x):
        self.eval()
        with torch.no_grad():
            return self(x.to(self.device))


class TextClassifier(Model):
    def __init__(self, vocab, n_classes):
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, 16)
        self.out = nn.Linear(16, n_classes)

    def forward(self, ids):
        return self.out(self.emb(ids))


def main():
    path = os.path.join(tempfile.mkdtemp(), "model.bin")
    trained = TextClassifier(50, 3)  # fitted on a GPU in the original workflow
    trained.save(path)

    model = TextClassifier(50, 3)
    model.load(path, device="cpu")
    print(model.predict_one(torch.randint(0, 50, (2, 7))).argmax(-1))


if __name__ == "__main__":
    main()
