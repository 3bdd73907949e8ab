# source: https://github.com/thangvubk/SoftGroup/issues/215
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the clustering step runs on the CPU, so the proposal index pairs it returns are CPU tensors;
#      at test time they are filtered with a boolean mask computed from the network's CUDA mask
#      scores. The fix given in the thread moves the proposals to the mask's device before indexing.
import torch
import torch.nn as nn


def bfs_cluster(neighbors: torch.Tensor, min_points: int):
    groups = [row.nonzero().view(-1) for row in neighbors if row.sum() >= min_points]
    idx = [torch.stack([torch.full_like(g, k), g], dim=1) for k, g in enumerate(groups)]
    return torch.cat(idx).int() if idx else torch.zeros((0, 2), dtype=torch.int32)


class InstanceHead(nn.Module):
    def __init__(self, channels, num_classes, mask_thr=-0.5):
        super().__init__()
        self.mask_linear = nn.Linear(channels, num_classes)
        self.mask_thr = mask_thr

    def forward(self, feats, coords):
        neighbors = (torch.cdist(coords, coords) < 0.1).cpu()
        proposals_idx = bfs_cluster(neighbors, min_points=2)
        mask_scores = self.mask_linear(feats[proposals_idx[:, 1].long().to(feats.device)])
        return self.get_instances(proposals_idx, mask_scores, coords.size(0))

    def get_instances(self, proposals_idx, mask_scores, num_points):
        num_instances = int(proposals_idx[:, 0].max()) + 1 if len(proposals_idx) else 0
        masks = []
        for i in range(mask_scores.size(1)):
            mask_pred = torch.zeros((num_instances, num_points), dtype=torch.int, device=mask_scores.device)
            mask_inds = mask_scores[:, i] > self.mask_thr
            proposals_idx = proposals_idx.to(mask_inds.device)
            cur_proposals_idx = proposals_idx[mask_inds].long()
            mask_pred[cur_proposals_idx[:, 0], cur_proposals_idx[:, 1]] = 1
            masks.append(mask_pred)
        return masks


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    head = InstanceHead(channels=16, num_classes=4).to(device)
    out = head(torch.randn(500, 16, device=device), torch.rand(500, 3, device=device))
