# source: https://github.com/madminer-tool/madminer/pull/210
# fixed twin: PR #210 (merge 15d123e) copies t_hat and x_gradients to the CPU when run_on_gpu before the .numpy()
#             calls, as merged (its x_gradients.cpu() also runs when x_gradients is None; commit d2a164a the next
#             day guards it with "if x_gradients is not None", not applied here).
from __future__ import absolute_import, division, print_function, unicode_literals

import numpy as np
import torch
import torch.nn as nn
from torch import tensor
from torch.autograd import grad


# --- madminer/utils/ml/utils.py ---
def get_activation_function(activation):
    if activation == "relu":
        return torch.relu
    elif activation == "tanh":
        return torch.tanh
    elif activation == "sigmoid":
        return torch.sigmoid
    else:
        raise ValueError("Activation function %s unknown", activation)


# --- madminer/utils/ml/models/score.py ---
class LocalScoreEstimator(nn.Module):
    def __init__(self, n_observables, n_parameters, n_hidden, activation="tanh"):

        super(LocalScoreEstimator, self).__init__()

        self.n_hidden = n_hidden
        self.activation = get_activation_function(activation)

        self.layers = nn.ModuleList()
        n_last = n_observables

        for n_hidden_units in n_hidden:
            self.layers.append(nn.Linear(n_last, n_hidden_units))
            n_last = n_hidden_units

        self.layers.append(nn.Linear(n_last, n_parameters))

    def forward(self, x, return_grad_x=False):
        if return_grad_x and not x.requires_grad:
            x.requires_grad = True

        t_hat = x

        for i, layer in enumerate(self.layers):
            if i > 0:
                t_hat = self.activation(t_hat)
            t_hat = layer(t_hat)

        if return_grad_x:
            x_gradient = grad(t_hat, x, grad_outputs=torch.ones_like(t_hat.data), only_inputs=True, create_graph=True)[
                0
            ]

            return t_hat, x_gradient

        return t_hat

    def to(self, *args, **kwargs):
        self = super(LocalScoreEstimator, self).to(*args, **kwargs)

        for i, layer in enumerate(self.layers):
            self.layers[i] = layer.to(*args, **kwargs)

        return self


# --- madminer/utils/ml/score_trainer.py ---
def evaluate_local_score_model(model, xs=None, run_on_gpu=True, double_precision=False, return_grad_x=False):
    # CPU or GPU?
    run_on_gpu = run_on_gpu and torch.cuda.is_available()
    device = torch.device("cuda" if run_on_gpu else "cpu")
    dtype = torch.double if double_precision else torch.float

    # Prepare data
    xs = torch.stack([tensor(i) for i in xs])

    model = model.to(device, dtype)
    xs = xs.to(device, dtype)

    # Evaluate networks
    if return_grad_x:
        model.eval()
        t_hat, x_gradients = model(xs, return_grad_x=True)
    else:
        with torch.no_grad():
            model.eval()
            t_hat = model(xs)
        x_gradients = None

    # Copy back tensors to CPU
    if run_on_gpu:
      t_hat = t_hat.cpu()
      x_gradients = x_gradients.cpu()

    # Get data and return
    t_hat = t_hat.detach().numpy()

    if return_grad_x:
        x_gradients = x_gradients.detach().numpy()
        return t_hat, x_gradients

    return t_hat


# --- madminer/ml.py (MLForge reduced to the SALLY evaluation) ---
class MLForge:
    def __init__(self, debug=False):
        self.debug = debug

        self.model = None
        self.method = None
        self.x_scaling_means = None
        self.x_scaling_stds = None

    def evaluate(self, x, return_grad_x=False):
        # Scale observables
        if self.x_scaling_means is not None and self.x_scaling_stds is not None:
            x_scaled = x - self.x_scaling_means
            x_scaled /= self.x_scaling_stds
        else:
            x_scaled = x

        # SALLY evaluation
        if self.method in ["sally", "sallino"]:
            if return_grad_x:
                all_t_hat, all_x_gradients = evaluate_local_score_model(model=self.model, xs=x, return_grad_x=True)

                return all_t_hat, all_x_gradients

            all_t_hat = evaluate_local_score_model(model=self.model, xs=x_scaled)

            return all_t_hat


# --- driver: a SALLY MLForge as MLForge.train leaves it (training cut), then evaluate ---
if __name__ == "__main__":
    forge = MLForge()
    x = np.random.normal(size=(100, 5))

    forge.method = "sally"
    forge.model = LocalScoreEstimator(n_observables=5, n_parameters=2, n_hidden=(20, 20))
    forge.x_scaling_means = np.mean(x, axis=0)
    forge.x_scaling_stds = np.maximum(np.std(x, axis=0), 1.0e-6)

    all_t_hat = forge.evaluate(x)
