# source: https://github.com/open-mmlab/mmdetection/pull/1478
# fixed twin: get_anchors takes the feature maps' device and passes it to grid_anchors and valid_flags, as the merged PR does.
import torch
import torch.nn as nn


class AnchorGenerator:
    def __init__(self, base_size, scales, ratios):
        scales, ratios = torch.tensor(scales, dtype=torch.float32), torch.tensor(ratios, dtype=torch.float32)
        h_ratios = torch.sqrt(ratios)
        ws = (base_size * (1 / h_ratios)[:, None] * scales[None, :]).view(-1)
        hs = (base_size * h_ratios[:, None] * scales[None, :]).view(-1)
        self.base_anchors = torch.stack([-0.5 * ws, -0.5 * hs, 0.5 * ws, 0.5 * hs], dim=-1)

    def grid_anchors(self, featmap_size, stride=16, device="cuda"):
        base_anchors = self.base_anchors.to(device)
        feat_h, feat_w = featmap_size
        shift_x = torch.arange(0, feat_w, device=device) * stride
        shift_y = torch.arange(0, feat_h, device=device) * stride
        yy, xx = torch.meshgrid(shift_y, shift_x, indexing="ij")
        shifts = torch.stack([xx.reshape(-1), yy.reshape(-1)] * 2, dim=-1).type_as(base_anchors)
        return (base_anchors[None, :, :] + shifts[:, None, :]).view(-1, 4)

    def valid_flags(self, featmap_size, valid_size, device="cuda"):
        feat_h, feat_w = featmap_size
        valid = torch.zeros(feat_h, feat_w, dtype=torch.bool, device=device)
        valid[: valid_size[0], : valid_size[1]] = True
        return valid.view(-1, 1).expand(-1, self.base_anchors.size(0)).reshape(-1)


def delta2bbox(anchors, deltas):
    widths = (anchors[:, 2] - anchors[:, 0]).unsqueeze(1)
    heights = (anchors[:, 3] - anchors[:, 1]).unsqueeze(1)
    cx = ((anchors[:, 0] + anchors[:, 2]) * 0.5).unsqueeze(1) + deltas[:, 0::4] * widths
    cy = ((anchors[:, 1] + anchors[:, 3]) * 0.5).unsqueeze(1) + deltas[:, 1::4] * heights
    w, h = widths * deltas[:, 2::4].exp(), heights * deltas[:, 3::4].exp()
    return torch.cat([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=1)


class AnchorHead(nn.Module):
    def __init__(self, in_channels=8, strides=(8, 16)):
        super().__init__()
        self.anchor_strides = strides
        self.anchor_generators = [AnchorGenerator(s, [8.0], [0.5, 1.0, 2.0]) for s in strides]
        self.conv_cls = nn.Conv2d(in_channels, 3, 1)
        self.conv_reg = nn.Conv2d(in_channels, 3 * 4, 1)

    def forward(self, feats):
        return [self.conv_cls(f) for f in feats], [self.conv_reg(f) for f in feats]

    def get_anchors(self, featmap_sizes, pad_shape, device):
        anchors, flags = [], []
        for i, size in enumerate(featmap_sizes):
            anchors.append(self.anchor_generators[i].grid_anchors(size, self.anchor_strides[i], device=device))
            valid = (pad_shape[0] // self.anchor_strides[i], pad_shape[1] // self.anchor_strides[i])
            flags.append(self.anchor_generators[i].valid_flags(size, valid, device=device))
        return anchors, flags

    def get_bboxes(self, cls_scores, bbox_preds, pad_shape):
        featmap_sizes = [s.size()[-2:] for s in cls_scores]
        mlvl_anchors, mlvl_flags = self.get_anchors(featmap_sizes, pad_shape, cls_scores[0].device)
        boxes = []
        for anchors, flags, pred in zip(mlvl_anchors, mlvl_flags, bbox_preds):
            deltas = pred[0].permute(1, 2, 0).reshape(-1, 4)
            boxes.append(delta2bbox(anchors, deltas)[flags])
        return torch.cat(boxes)


if __name__ == "__main__":
    head = AnchorHead().eval()  # the reported case: the detector stays on the CPU
    feats = [torch.randn(1, 8, 8, 8), torch.randn(1, 8, 4, 4)]
    with torch.no_grad():
        print(head.get_bboxes(*head(feats), pad_shape=(64, 64)).shape)
