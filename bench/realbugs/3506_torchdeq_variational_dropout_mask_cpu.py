# source: https://github.com/locuslab/torchdeq/issues/13
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
#        (torchdeq/dropout.py line 73, in forward: return mask * x)
# bug: the variational dropout layers draw their mask lazily, at the first training forward, with
#      torch.zeros(...).bernoulli_(1 - self.dropout), a CPU tensor whatever the input's device, and keep it in the
#      plain attribute self.mask; forward then multiplies the CPU mask with the input, so on a CUDA input (the module
#      moved with .to(device), which has nothing to move) the product fails. The reporter names the cause ("many lines
#      resemble m = torch.zeros(B, L, 1).bernoulli_(...)", to be allocated on the input's device); the issue and its PR
#      #14 ("dropout device support") are open and the PR's diff is not in the stored text, so no twin. The two mask
#      allocations of VariationalDropout1d, the class the report uses, are marked (DL202); the product in forward the
#      traceback points to is the DL201 candidate. Reductions: the base class and VariationalDropout1d as in
#      torchdeq/dropout.py at 4f6bd5f without the docstrings; the other dimensionalities and reset_dropout are dropped.
#      The driver is the report's reproduction (its assert on CUDA replaced by a fallback to the CPU).
import torch
import torch.nn as nn


# --- torchdeq/dropout.py ---
class _VariationalDropoutNd(nn.Module):
    def __init__(self, dropout=0.5):
        super().__init__()
        if dropout < 0 or dropout > 1:
            raise ValueError("dropout probability has to be between 0 and 1, "
                             "but got {}".format(dropout))
        self.dropout = dropout
        self.mask = None

    def reset_mask(self, x):
        raise NotImplementedError

    def forward(self, x):
        if not self.training or self.dropout == 0.:
            return x
        if self.mask is None:
            self.reset_mask(x)
        mask = self.mask.expand_as(x)
        return mask * x


class VariationalDropout1d(_VariationalDropoutNd):
    def __init__(self, dropout=0.5, token_first=True):
        super().__init__(dropout)
        self.token_first = token_first

    def reset_mask(self, x):
        if self.token_first:
            # (B, L, D)
            B, _, D = x.shape
            m = torch.zeros(B, 1, D).bernoulli_(1 - self.dropout)  # expect: DL202
        else:
            # (B, D, L)
            B, D, _ = x.shape
            m = torch.zeros(B, D, 1).bernoulli_(1 - self.dropout)  # expect: DL202
        mask = m.requires_grad_(False) / (1 - self.dropout)
        self.mask = mask


# --- the report's reproduction ---
if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    drop = VariationalDropout1d(dropout=0.1).to(device)
    drop.train()
    x = torch.randn(2, 8, 16, device=device)
    print("input device:", x.device)
    y = drop(x)
    print("output device:", y.device)
