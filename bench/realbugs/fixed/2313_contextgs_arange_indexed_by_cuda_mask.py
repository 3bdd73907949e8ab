# source: https://github.com/wyf0912/ContextGS/pull/11
# fixed twin: the anchor index range is made on the mask's device (device=to_code.device), as the PR does.
import torch
import torch.nn as nn


class GaussianModel(nn.Module):
    def __init__(self, n_anchors=64, feat_dim=8, level_num=2):
        super().__init__()
        self.level_num = level_num
        self.voxel_size = 0.1
        self._anchor = nn.Parameter(torch.rand(n_anchors, 3))
        self._anchor_feat = nn.Parameter(torch.randn(n_anchors, feat_dim))
        self.grid_mlp = nn.ModuleList([nn.Linear(3 + feat_dim, 2 * feat_dim) for _ in range(level_num)])


def divide_levels(pc, anchor):
    unique, inverse = torch.unique(torch.round(anchor / pc.voxel_size / 4), dim=0, return_inverse=True)
    mapping = torch.zeros(unique.shape[0], dtype=torch.long, device=anchor.device)
    mapping.scatter_(0, inverse, torch.arange(anchor.shape[0], device=anchor.device))
    return [anchor, anchor[mapping]], [mapping]


def multi_scale_generating(pc, anchor, feat):
    feat_after_Q = torch.zeros_like(feat)
    hybrid_anchor_list, mapping_list = divide_levels(pc, anchor)
    for i in reversed(range(pc.level_num)):
        if i == 0:
            hybrid_feat = feat
            to_code = torch.ones_like(hybrid_feat[:, 0]).bool()
            to_code[mapping_list[0]] = False
        else:
            hybrid_feat = feat[mapping_list[0]]
            to_code = torch.ones_like(hybrid_feat[:, 0]).bool()
        if to_code.sum() == 0:
            continue
        if i != 0:
            index_orig = mapping_list[0][to_code]
        else:
            index_orig = torch.arange(anchor.shape[0], device=to_code.device)[to_code]
        feat_in = torch.cat([hybrid_anchor_list[i][to_code], hybrid_feat[to_code]], dim=1)
        mean, _ = pc.grid_mlp[i](feat_in).chunk(2, dim=-1)
        feat_after_Q[index_orig] = hybrid_feat[to_code] + 0.1 * torch.tanh(mean)
    return feat_after_Q


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pc = GaussianModel().to(device)
    out = multi_scale_generating(pc, pc._anchor, pc._anchor_feat)
    print(out.shape, float(out.abs().sum()) > 0)
