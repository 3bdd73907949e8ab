# source: https://github.com/tommasocarraro/LTNtorch/issues/2
# error: ValueError: 'mask' must be a torch.BoolTensor. (every aggregator given a guarded quantifier's mask, on the GPU)
# bug: the aggregators check the mask of a guarded quantifier with isinstance(mask, torch.BoolTensor). That class is
#      the CPU boolean tensor type, so a boolean mask computed from groundings on the GPU (a torch.cuda.BoolTensor)
#      fails the check and every masked quantification raises once the model runs on the GPU. The new release checks
#      the dtype instead, mask.dtype == torch.bool (both aggregators' checks are marked). No rule covers a CPU tensor
#      type in an isinstance check; DL306 (legacy typed-tensor APIs that bake in a device) is the closest.
import torch
import torch.nn as nn


class AggregPMean:
    def __init__(self, p=2):
        self.p = p

    def __call__(self, xs, dim=None, keepdim=False, mask=None):
        if mask is not None:
            if mask.shape != xs.shape:
                raise ValueError("'xs' and 'mask' must have the same shape.")
            if not isinstance(mask, torch.BoolTensor):  # expect: DL306
                raise ValueError("'mask' must be a torch.BoolTensor.")
            xs = torch.where(~mask, torch.full_like(xs, float("nan")), xs)
            return torch.pow(torch.nanmean(torch.pow(xs, self.p), dim=dim, keepdim=keepdim), 1 / self.p)
        return torch.pow(torch.mean(torch.pow(xs, self.p), dim=dim, keepdim=keepdim), 1 / self.p)


class AggregPMeanError:
    def __init__(self, p=2):
        self.p = p

    def __call__(self, xs, dim=None, keepdim=False, mask=None):
        if mask is not None:
            if mask.shape != xs.shape:
                raise ValueError("'xs' and 'mask' must have the same shape.")
            if not isinstance(mask, torch.BoolTensor):  # expect: DL306
                raise ValueError("'mask' must be a torch.BoolTensor.")
            xs = torch.where(~mask, torch.full_like(xs, float("nan")), xs)
            return 1 - torch.pow(torch.nanmean(torch.pow(1 - xs, self.p), dim=dim, keepdim=keepdim), 1 / self.p)
        return 1 - torch.pow(torch.mean(torch.pow(1 - xs, self.p), dim=dim, keepdim=keepdim), 1 / self.p)


class Predicate(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, 8), nn.ELU(), nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Quantifier:
    def __init__(self, agg_op):
        self.agg_op = agg_op

    def __call__(self, truth_values, cond_mask=None):
        return self.agg_op(truth_values, dim=0, mask=cond_mask)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    smokes = Predicate(3).to(device)
    x = torch.randn(20, 3).to(device)
    Forall, Exists = Quantifier(AggregPMeanError(p=2)), Quantifier(AggregPMean(p=2))
    truth = smokes(x)
    adult = x[:, 0] > 0
    print(Forall(truth, cond_mask=adult).item(), Exists(truth, cond_mask=~adult).item())
