# source: https://github.com/theislab/scarches/pull/223
# fixed twin: PR #223 (ad93fd7, merged as bf9db8c) catches the RuntimeError of pickle.load in _load_params and re-reads
#             attr.pkl with _utils.UnpicklerCpu, whose find_class loads torch storages with map_location='cpu'.
import inspect
import io
import os
import pickle
import tempfile
from typing import Optional

import torch
import torch.nn as nn


# --- scarches/models/base/_utils.py ---
class UnpicklerCpu(pickle.Unpickler):
    def find_class(self, module, name):
        if module == 'torch.storage' and name == '_load_from_bytes':
            return lambda b: torch.load(io.BytesIO(b), map_location='cpu')
        else:
            return super().find_class(module, name)


# --- scarches/models/base/_base.py ---
class BaseMixin:
    def _get_user_attributes(self):
        attributes = inspect.getmembers(self, lambda a: not (inspect.isroutine(a)))
        attributes = [a for a in attributes if not (a[0].startswith("__") and a[0].endswith("__"))]
        return [a for a in attributes if not a[0].startswith("_abc_")]

    def _get_public_attributes(self):
        public_attributes = self._get_user_attributes()
        return {a[0]: a[1] for a in public_attributes if a[0][-1] == "_"}

    def save(self, dir_path: str, overwrite: bool = False):
        public_attributes = self._get_public_attributes()
        os.makedirs(dir_path, exist_ok=overwrite)
        torch.save(self.model.state_dict(), os.path.join(dir_path, "model_params.pt"))
        with open(os.path.join(dir_path, "attr.pkl"), "wb") as f:
            pickle.dump(public_attributes, f)

    @classmethod
    def _load_params(cls, dir_path: str, map_location: Optional[str] = None):
        setup_dict_path = os.path.join(dir_path, "attr.pkl")
        model_path = os.path.join(dir_path, "model_params.pt")
        try:
            with open(setup_dict_path, "rb") as handle:
                attr_dict = pickle.load(handle)
        # RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False.
        except RuntimeError:
            with open(setup_dict_path, "rb") as handle:
                attr_dict = UnpicklerCpu(handle).load()
        model_state_dict = torch.load(model_path, map_location=map_location)
        return attr_dict, model_state_dict

    @classmethod
    def load(cls, dir_path: str, map_location=None):
        attr_dict, model_state_dict = cls._load_params(dir_path, map_location)
        init_params = cls._get_init_params_from_dict(attr_dict)
        model = cls(**init_params)
        model.model.to(next(iter(model_state_dict.values())).device)
        model.model.load_state_dict(model_state_dict)
        model.model.eval()
        model.is_trained_ = attr_dict["is_trained_"]
        return model


# --- scarches/models/scpoli/scpoli_model.py ---
class scPoli(BaseMixin):
    def __init__(self, input_dim, n_cell_types, latent_dim=10, prototypes_labeled=None):
        self.input_dim_ = input_dim
        self.n_cell_types_ = n_cell_types
        self.latent_dim_ = latent_dim
        self.prototypes_labeled_ = {"mean": None, "cov": None} if prototypes_labeled is None else prototypes_labeled
        self.is_trained_ = False
        self.model = nn.Sequential(nn.Linear(input_dim, 32), nn.ReLU(), nn.Linear(32, latent_dim))
        if self.prototypes_labeled_["mean"] is not None:
            self.prototypes_labeled_["mean"] = self.prototypes_labeled_["mean"].to(next(self.model.parameters()).device)
            self.prototypes_labeled_["cov"] = self.prototypes_labeled_["cov"].to(next(self.model.parameters()).device)

    def train(self, x, cell_types, n_epochs=2, lr=1e-3):
        # scPoliTrainer: the model goes to the GPU when there is one
        if torch.cuda.is_available():
            self.model.cuda()
        device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        x, cell_types = x.to(device), cell_types.to(device)
        for _ in range(n_epochs):
            latent = self.model(x)
            loss = latent.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            latent = self.model(x)
            means = torch.stack([latent[cell_types == c].mean(0) for c in range(self.n_cell_types_)])
            covs = torch.stack([torch.cov(latent[cell_types == c].T) for c in range(self.n_cell_types_)])
        self.is_trained_ = True
        self.prototypes_labeled_ = {"mean": means, "cov": covs}

    @classmethod
    def _get_init_params_from_dict(cls, dct):
        return {"input_dim": dct["input_dim_"], "n_cell_types": dct["n_cell_types_"],
                "latent_dim": dct["latent_dim_"], "prototypes_labeled": dct["prototypes_labeled_"]}


# --- driver: reference model trained on a GPU machine, query mapped on a CPU-only one ---
if __name__ == "__main__":
    x, cell_types = torch.randn(60, 20), torch.arange(60) % 3
    reference = scPoli(input_dim=20, n_cell_types=3)
    reference.train(x, cell_types)
    dir_path = os.path.join(tempfile.mkdtemp(), "ref_model")
    reference.save(dir_path, overwrite=True)
    query = scPoli.load(dir_path, map_location=torch.device("cpu"))
    print(query.prototypes_labeled_["mean"].shape)
