# source: https://github.com/meta-pytorch/botorch/pull/1035
# error: (no traceback in the PR) tensor attributes of input transforms are not moved by Module.to(); with the model on a GPU, forward mixes them with CUDA inputs
# bug: the AppendFeatures and InputPerturbation input transforms keep the feature set, perturbation
#      set and bounds they are given as plain tensor attributes, so model.to(device) leaves them on
#      the CPU and the transform concatenates / adds them to the GPU inputs. The fix registers them as
#      buffers.
import torch
from torch.nn import Module


class AppendFeatures(Module):
    def __init__(self, feature_set: torch.Tensor):
        super().__init__()
        if feature_set.dim() != 2:
            raise ValueError("`feature_set` must be an `n_f x d_f`-dim tensor!")
        self.feature_set = feature_set  # expect: DL103

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        expanded_X = X.unsqueeze(dim=-2).expand(*X.shape[:-1], self.feature_set.shape[0], -1)
        expanded_features = self.feature_set.expand(*expanded_X.shape[:-1], -1)
        return torch.cat([expanded_X, expanded_features], dim=-1).view(*X.shape[:-2], -1, X.shape[-1] + self.feature_set.shape[-1])


class InputPerturbation(Module):
    def __init__(self, perturbation_set: torch.Tensor, bounds=None):
        super().__init__()
        self.perturbation_set = perturbation_set  # expect: DL103
        self.bounds = bounds  # expect: DL103

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        p = X.unsqueeze(-2) + self.perturbation_set
        if self.bounds is not None:
            p = torch.maximum(torch.minimum(p, self.bounds[1]), self.bounds[0])
        return p.view(*X.shape[:-2], -1, X.shape[-1])


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    append = AppendFeatures(torch.rand(5, 2)).to(device)
    perturb = InputPerturbation(torch.randn(4, 3) * 0.01, bounds=torch.tensor([[0.0] * 3, [1.0] * 3])).to(device)
    X = torch.rand(6, 2, 3, device=device)
    print(append(X).shape, perturb(X).shape)
