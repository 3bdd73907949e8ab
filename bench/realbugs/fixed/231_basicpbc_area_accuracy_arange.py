# source: https://github.com/ykdai/BasicPBC/issues/4
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the validation metric enumerates segments with torch.arange on the CPU and masks it with a
#      comparison of two GPU match tensors; PyTorch (newer than the authors' 1.12) rejects the CUDA mask.
import torch
import torch.nn as nn


class BasicPBC(nn.Module):
    def __init__(self, descriptor_dim=128):
        super().__init__()
        self.proj = nn.Linear(descriptor_dim, descriptor_dim)

    def forward(self, desc0, desc1):
        d0, d1 = self.proj(desc0), self.proj(desc1)
        scores = torch.einsum('bnd,bmd->bnm', d0, d1)
        return scores.max(2).indices, scores

    @torch.no_grad()
    def evaluate(self, data):
        indices0, _ = self(data["descriptor0"], data["descriptor1"])
        all_matches_origin = data["all_matches"]
        weights = (all_matches_origin[0] != -1).float()
        accuracy = ((all_matches_origin[0] == indices0[0]).float() * weights).sum() / weights.sum()
        indices_new = torch.arange(0, all_matches_origin[0].shape[0]).to(all_matches_origin[0].device)
        area_accuracy = torch.tensor(
            [(data["segment"] == ii + 1).sum() for ii in indices_new[all_matches_origin[0] == indices0[0]]]
        ).sum() / (weights.sum() * 1.0)
        return accuracy, area_accuracy
