# source: https://github.com/ultralytics/yolov5/pull/1619
# error: device mismatch from torch.hub models (issue #1617) when an image has no detections
# bug: non_max_suppression pre-fills its per-image outputs with torch.zeros(0, 6) on the CPU; images
#      with no surviving boxes keep that CPU tensor while the others are CUDA tensors, and the
#      downstream code mixes them.
import time

import torch
import torchvision


def xywh2xyxy(x):
    y = x.clone()
    y[:, 0] = x[:, 0] - x[:, 2] / 2
    y[:, 1] = x[:, 1] - x[:, 3] / 2
    y[:, 2] = x[:, 0] + x[:, 2] / 2
    y[:, 3] = x[:, 1] + x[:, 3] / 2
    return y


def non_max_suppression(prediction, conf_thres=0.1, iou_thres=0.6, classes=None, agnostic=False):
    """Performs Non-Maximum Suppression (NMS) on inference results; returns nx6 (x1, y1, x2, y2, conf, cls)."""
    nc = prediction[0].shape[1] - 5
    xc = prediction[..., 4] > conf_thres
    max_wh, max_det, time_limit = 4096, 300, 10.0
    multi_label = nc > 1

    t = time.time()
    output = [torch.zeros(0, 6)] * prediction.shape[0]  # expect: DL202
    for xi, x in enumerate(prediction):
        x = x[xc[xi]]
        if not x.shape[0]:
            continue
        x[:, 5:] *= x[:, 4:5]
        box = xywh2xyxy(x[:, :4])
        if multi_label:
            i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T
            x = torch.cat((box[i], x[i, j + 5, None], j[:, None].float()), 1)
        else:
            conf, j = x[:, 5:].max(1, keepdim=True)
            x = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > conf_thres]
        if classes:
            x = x[(x[:, 5:6] == torch.tensor(classes, device=x.device)).any(1)]
        if not x.shape[0]:
            continue
        c = x[:, 5:6] * (0 if agnostic else max_wh)
        boxes, scores = x[:, :4] + c, x[:, 4]
        i = torchvision.ops.nms(boxes, scores, iou_thres)
        output[xi] = x[i[:max_det]]
        if (time.time() - t) > time_limit:
            break
    return output
