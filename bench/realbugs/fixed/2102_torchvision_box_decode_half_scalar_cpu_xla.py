# source: https://github.com/pytorch/xla/issues/1749
# fixed twin: each 0.5 is made on the device of the tensor it scales (device=pred_w.device / pred_h.device), as torchvision does since.
import math

import torch
import torch.nn as nn


class BoxCoder:
    def __init__(self, weights, bbox_xform_clip=math.log(1000.0 / 16)):
        self.weights = weights
        self.bbox_xform_clip = bbox_xform_clip

    def decode_single(self, rel_codes, boxes):
        boxes = boxes.to(rel_codes.dtype)
        widths = boxes[:, 2] - boxes[:, 0]
        heights = boxes[:, 3] - boxes[:, 1]
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights

        wx, wy, ww, wh = self.weights
        dx = rel_codes[:, 0::4] / wx
        dy = rel_codes[:, 1::4] / wy
        dw = torch.clamp(rel_codes[:, 2::4] / ww, max=self.bbox_xform_clip)
        dh = torch.clamp(rel_codes[:, 3::4] / wh, max=self.bbox_xform_clip)

        pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
        pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
        pred_w = torch.exp(dw) * widths[:, None]
        pred_h = torch.exp(dh) * heights[:, None]

        pred_boxes1 = pred_ctr_x - torch.tensor(0.5, dtype=pred_ctr_x.dtype, device=pred_w.device) * pred_w
        pred_boxes2 = pred_ctr_y - torch.tensor(0.5, dtype=pred_ctr_y.dtype, device=pred_h.device) * pred_h
        pred_boxes3 = pred_ctr_x + torch.tensor(0.5, dtype=pred_ctr_x.dtype, device=pred_w.device) * pred_w
        pred_boxes4 = pred_ctr_y + torch.tensor(0.5, dtype=pred_ctr_y.dtype, device=pred_h.device) * pred_h
        return torch.stack((pred_boxes1, pred_boxes2, pred_boxes3, pred_boxes4), dim=2).flatten(1)


class RPNHead(nn.Module):
    def __init__(self, channels=8, anchors=3):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bbox_pred = nn.Conv2d(channels, anchors * 4, 1)
        self.box_coder = BoxCoder(weights=(1.0, 1.0, 1.0, 1.0))

    def forward(self, features, anchors):
        deltas = self.bbox_pred(torch.relu(self.conv(features)))
        deltas = deltas.permute(0, 2, 3, 1).reshape(-1, 4)
        return self.box_coder.decode_single(deltas, anchors)


def make_anchors(height, width, per_cell, device):
    ys, xs = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij")
    centres = torch.stack((xs, ys, xs, ys), dim=-1).reshape(-1, 1, 4).float() * 16
    sizes = torch.tensor([-8.0, -8.0, 8.0, 8.0], device=device)
    return (centres + sizes).repeat(1, per_cell, 1).reshape(-1, 4)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # xm.xla_device() on the TPU
    head = RPNHead().to(device)
    features = torch.randn(1, 8, 5, 6, device=device)
    anchors = make_anchors(5, 6, 3, device)
    print(head(features, anchors).shape)
