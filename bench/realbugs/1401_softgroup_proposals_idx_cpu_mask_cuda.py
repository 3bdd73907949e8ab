# source: https://github.com/thangvubk/SoftGroup/issues/215
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: the grouping step hands the ball-query result to a host-side clustering op (bfs_cluster runs on
#      the CPU), so proposals_idx comes back as a CPU tensor; its point column is rewritten from the
#      CUDA object indices, which copies into the CPU tensor and leaves it on the host. get_instances
#      then selects the proposals with a boolean mask computed from the CUDA mask scores; recent
#      PyTorch rejects a CUDA mask on a CPU tensor. The fix a commenter posted (issue open, no
#      upstream commit) moves proposals_idx to the mask's device on the marked line (DL207: a tensor
#      indexed with a mask on a device PyTorch rejects).
import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def bfs_cluster(neighbours, npoint_thr, class_id):
    # stands in for the compiled op, which takes and returns host tensors
    n = neighbours.size(0)
    cluster = torch.arange(n, dtype=torch.int32) // max(npoint_thr, 1)
    point = torch.arange(n, dtype=torch.int32)
    proposals_idx = torch.stack([cluster, point], dim=1)
    proposals_offset = torch.arange(0, n + 1, max(npoint_thr, 1), dtype=torch.int32)
    return proposals_idx, proposals_offset


class SoftGroupLike(nn.Module):
    def __init__(self, in_ch=6, classes=3, score_thr=0.2, mask_thr=-0.5):
        super().__init__()
        self.classes = classes
        self.score_thr, self.mask_thr = score_thr, mask_thr
        self.semantic_linear = nn.Linear(in_ch, classes)
        self.mask_linear = nn.Linear(in_ch, classes)
        self.cls_linear = nn.Linear(in_ch, classes)

    def forward_grouping(self, semantic_scores, coords):
        scores = semantic_scores.softmax(-1)[:, 0].contiguous()
        object_idxs = (scores > self.score_thr).nonzero().view(-1)
        neighbours = coords[object_idxs]
        proposals_idx, proposals_offset = bfs_cluster(neighbours.cpu(), 4, 0)
        proposals_idx[:, 1] = object_idxs[proposals_idx[:, 1].long()].int()
        return proposals_idx, proposals_offset

    def forward_instance(self, proposals_idx, feats):
        c_idxs = proposals_idx[:, 1].to(feats.device).long()
        mask_scores = self.mask_linear(feats[c_idxs])
        n_inst = int(proposals_idx[-1, 0]) + 1
        cls_scores = self.cls_linear(feats[:n_inst])
        return cls_scores, mask_scores

    def get_instances(self, proposals_idx, num_points, cls_scores, mask_scores):
        num_instances = cls_scores.size(0)
        preds = []
        for i in range(self.classes):
            mask_pred = torch.zeros((num_instances, num_points), dtype=torch.int, device=DEVICE)
            mask_inds = mask_scores[:, i] > self.mask_thr
            cur_proposals_idx = proposals_idx[mask_inds].long()  # expect: DL207
            mask_pred[cur_proposals_idx[:, 0], cur_proposals_idx[:, 1]] = 1
            preds.append(mask_pred)
        return torch.cat(preds).cpu()

    def forward_test(self, batch):
        feats = batch["feats"].to(DEVICE)
        coords = batch["coords"].to(DEVICE)
        semantic_scores = self.semantic_linear(feats)
        proposals_idx, _ = self.forward_grouping(semantic_scores, coords)
        cls_scores, mask_scores = self.forward_instance(proposals_idx, feats)
        return self.get_instances(proposals_idx, feats.size(0), cls_scores, mask_scores)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SoftGroupLike().to(DEVICE).eval()
    batch = {"feats": torch.randn(40, 6), "coords": torch.randn(40, 3)}
    with torch.no_grad():
        print(model.forward_test(batch).shape)
