# source: https://github.com/facebookresearch/segment-anything/pull/41
# fixed twin: the NMS categories are built with torch.zeros_like(data["boxes"][:, 0]), on the boxes' device, in both calls (PR 41, commit 006dbe5).
from typing import Dict, List

import torch
import torch.nn as nn


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def nms(boxes, scores, iou_threshold):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        lt = torch.max(boxes[i, :2], boxes[order[1:], :2])
        rb = torch.min(boxes[i, 2:], boxes[order[1:], 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=1)
        iou = inter / (box_area(boxes[i:i + 1]) + box_area(boxes[order[1:]]) - inter)
        order = order[1:][iou <= iou_threshold]
    return torch.stack(keep) if keep else torch.empty(0, dtype=torch.long, device=boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    keep_mask = torch.zeros_like(scores, dtype=torch.bool)
    for class_id in torch.unique(idxs):
        curr_indices = torch.where(idxs == class_id)[0]
        curr_keep_indices = nms(boxes[curr_indices], scores[curr_indices], iou_threshold)
        keep_mask[curr_indices[curr_keep_indices]] = True
    keep_indices = torch.where(keep_mask)[0]
    return keep_indices[scores[keep_indices].sort(descending=True)[1]]


class MaskData:
    def __init__(self, **kwargs):
        self._stats: Dict[str, torch.Tensor] = dict(kwargs)

    def __getitem__(self, key):
        return self._stats[key]

    def __setitem__(self, key, value):
        self._stats[key] = value

    def cat(self, other: "MaskData"):
        for k, v in other._stats.items():
            self._stats[k] = torch.cat([self._stats[k], v]) if k in self._stats else v.clone()

    def filter(self, keep: torch.Tensor):
        for k, v in self._stats.items():
            self._stats[k] = v[torch.as_tensor(keep, device=v.device)]


class Predictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(2, 5)

    def forward(self, points):
        out = self.head(points)
        xy = points.repeat(1, 2) + torch.tensor([-4.0, -4.0, 4.0, 4.0], device=points.device)
        return xy + out[:, :4], out[:, 4].sigmoid()


class SamAutomaticMaskGenerator:
    def __init__(self, predictor, box_nms_thresh=0.7, crop_nms_thresh=0.7):
        self.predictor = predictor
        self.box_nms_thresh = box_nms_thresh
        self.crop_nms_thresh = crop_nms_thresh
        self.device = next(predictor.parameters()).device

    def _generate_masks(self, crop_boxes: List[List[int]]) -> MaskData:
        data = MaskData()
        for crop_box in crop_boxes:
            data.cat(self._process_crop(crop_box))
        if len(crop_boxes) > 1:
            scores = 1 / box_area(data["crop_boxes"])
            scores = scores.to(data["boxes"].device)
            keep_by_nms = batched_nms(
                data["boxes"].float(),
                scores,
                torch.zeros_like(data["boxes"][:, 0]),
                iou_threshold=self.crop_nms_thresh,
            )
            data.filter(keep_by_nms)
        return data

    def _process_crop(self, crop_box: List[int]) -> MaskData:
        x0, y0, x1, y1 = crop_box
        points = torch.rand(16, 2, device=self.device) * torch.tensor([x1 - x0, y1 - y0], device=self.device)
        with torch.no_grad():
            boxes, iou_preds = self.predictor(points)
        data = MaskData(boxes=boxes, iou_preds=iou_preds)
        keep_by_nms = batched_nms(
            data["boxes"].float(),
            data["iou_preds"],
            torch.zeros_like(data["boxes"][:, 0]),
            iou_threshold=self.box_nms_thresh,
        )
        data.filter(keep_by_nms)
        data["boxes"] = data["boxes"] + torch.tensor([x0, y0, x0, y0], device=data["boxes"].device)
        data["crop_boxes"] = torch.tensor([crop_box for _ in range(len(data["boxes"]))], dtype=torch.float)
        return data


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    generator = SamAutomaticMaskGenerator(Predictor().to(device))
    masks = generator._generate_masks([[0, 0, 64, 64], [0, 0, 32, 32], [32, 32, 64, 64]])
    print(len(masks["boxes"]))
