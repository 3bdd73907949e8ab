# source: https://github.com/HazyResearch/metal/pull/108
# error: (PR "Torch saving loading": "if you pickle a model that has stored .cuda() weights and try to load it on
#        the CPU you get an error" - "I was training models on the GPU but loading them elsewhere on CPU")
#        RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False
# bug: metal/classifier.py's Classifier moves itself to the GPU in _train_model when config["use_cuda"] is set, and
#      Classifier.save pickles the whole module with pickle.dump(self, f); Classifier.load unpickles it with
#      pickle.load / pickle.loads, which restores every CUDA storage onto the GPU it came from and cannot be given a
#      mapping. The fix (PR #108, merge 9b152f5; commit e3bd056 "Switches to using torch.save and torch.load") saves
#      with torch.save(self, f, **kwargs) and loads with torch.load(f, **kwargs), so a caller on a CPU machine can pass
#      map_location, as the PR's discussion says. Both unpickling lines are marked; no rule names pickle.load of CUDA
#      tensors, DL301 (load-without-map-location) is the closest.
#      Reductions: Classifier keeps __init__'s use_cuda check, _set_seed, save/load, predict_proba (raising
#      NotImplementedError) and the GPU moves of _train_model (self.cuda() and metal.utils.place_on_gpu on each batch;
#      one full batch and an Adam loop instead of the data loaders, checkpointer, scheduler and logging); EndModel
#      becomes a Linear/ReLU stack built from layer_out_dims with the Classifier config keys it reads, keeps
#      _get_loss_fn (criteria moved with .cuda() when use_cuda; CrossEntropyLoss on hard labels instead of
#      SoftCrossEntropyLoss and _preprocess_Y), train_model's call of it and predict_proba. The driver trains and saves
#      on the GPU machine ("train") and loads on the CPU machine ("predict"), as the PR describes. NumPy is imported as
#      upstream (absent here), so the file does not run on this machine.
import pickle
import random
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


# --- metal/utils.py ---
def place_on_gpu(data):
    """Utility to place data on GPU, where data could be a torch.Tensor, a tuple
    or list of Tensors, or a tuple or list of tuple or lists of Tensors"""
    if isinstance(data, (list, tuple)):
        for i in range(len(data)):
            data[i] = place_on_gpu(data[i])
        return data
    elif isinstance(data, torch.Tensor):
        return data.cuda()
    else:
        return ValueError(f"Data type {type(data)} not recognized.")


# --- metal/classifier.py ---
class Classifier(nn.Module):
    def __init__(self, k, config):
        super().__init__()
        self.config = config
        self.multitask = False
        self.k = k

        # Set random seed
        if self.config["seed"] is None:
            self.config["seed"] = np.random.randint(1e6)
        self._set_seed(self.config["seed"])

        # Confirm that cuda is available if config is using CUDA
        if self.config["use_cuda"] and not torch.cuda.is_available():
            raise ValueError("use_cuda=True but CUDA not available.")

        # By default, put model in eval mode; switch to train mode in training
        self.eval()

    def _set_seed(self, seed):
        self.seed = seed
        if torch.cuda.is_available():
            # TODO: confirm this works for gpus without knowing gpu_id
            # torch.cuda.set_device(self.config['gpu_id'])
            torch.backends.cudnn.enabled = True
            torch.cuda.manual_seed(seed)
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)

    def save(self, destination=None):
        """Serialize and save a model."""
        if destination is None:
            return pickle.dumps(self)
        else:
            with open(destination, "wb") as f:
                pickle.dump(self, f)

    @staticmethod
    def load(source=None):
        """Deserialize and load a model."""
        if isinstance(source, bytes):
            return pickle.loads(source)  # expect: DL301
        else:
            with open(source, "rb") as f:
                return pickle.load(f)  # expect: DL301

    def _train_model(self, train_data, loss_fn, n_epochs=3):
        # Convert data to DataLoaders (stand-in: one full batch, a list as a DataLoader yields)
        train_loader = [list(train_data)]

        # Set model to train mode
        self.train()

        # Moving model to GPU
        if self.config["use_cuda"]:
            if self.config["verbose"]:
                print("Using GPU...")
            self.cuda()

        optimizer = optim.Adam(self.parameters(), lr=0.01)
        for epoch in range(n_epochs):
            for data in train_loader:

                # Moving data to GPU
                if self.config["use_cuda"]:
                    data = place_on_gpu(data)

                # Zero the parameter gradients
                optimizer.zero_grad()

                # Forward pass to calculate outputs
                loss = loss_fn(*data)

                # Backward pass to calculate gradients
                loss.backward()

                # Perform optimizer step
                optimizer.step()

        self.eval()

    def predict_proba(self, X, **kwargs):
        """Predicts soft probabilistic labels for an input X on all tasks"""
        raise NotImplementedError


# --- metal/end_model/end_model.py ---
class EndModel(Classifier):
    def __init__(self, layer_out_dims, use_cuda=False, seed=None, verbose=False):
        config = {"seed": seed, "use_cuda": use_cuda, "verbose": verbose}
        super().__init__(k=layer_out_dims[-1], config=config)
        layers = []
        for d_in, d_out in zip(layer_out_dims[:-2], layer_out_dims[1:-1]):
            layers += [nn.Linear(d_in, d_out), nn.ReLU()]
        layers.append(nn.Linear(layer_out_dims[-2], layer_out_dims[-1]))
        self.network = nn.Sequential(*layers)
        self.criteria = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.network(x)

    def _get_loss_fn(self):
        if self.config["use_cuda"]:
            criteria = self.criteria.cuda()
        else:
            criteria = self.criteria
        loss_fn = lambda X, Y: criteria(self.forward(X), Y)
        return loss_fn

    def train_model(self, train_data, n_epochs=3):
        # Create loss function
        loss_fn = self._get_loss_fn()

        # Execute training procedure
        self._train_model(train_data, loss_fn, n_epochs=n_epochs)

    def predict_proba(self, X):
        """Returns a [n, k] tensor of soft (float) predictions."""
        return F.softmax(self.forward(X), dim=1).data.cpu().numpy()


def train(path):
    """On the GPU machine."""
    em = EndModel(layer_out_dims=[2, 10, 2], use_cuda=torch.cuda.is_available(), seed=1337)
    X = torch.randn(64, 2)
    Y = (X[:, 0] > 0).long()
    em.train_model((X, Y), n_epochs=3)
    em.save(path)


def predict(path):
    """Elsewhere, on a CPU machine."""
    em_2 = EndModel.load(path)
    print(em_2.predict_proba(torch.randn(4, 2)))


if __name__ == "__main__":
    {"train": train, "predict": predict}[sys.argv[1]]("my_end_model.pkl")
