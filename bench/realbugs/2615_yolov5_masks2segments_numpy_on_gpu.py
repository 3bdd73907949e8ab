# source: https://github.com/ultralytics/yolov5/pull/9724
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: segmentation predict with --save-txt turns each instance mask into a polygon with
#      masks2segments, which calls .numpy() on the masks to hand them to OpenCV's contour finder.
#      The masks come from process_mask on the inference device, so on a GPU the conversion fails.
#      The merged fix adds .cpu() before .numpy(); the changed line is marked (DL204: .numpy() on a
#      GPU tensor). cv2.findContours is replaced by a small boundary finder; the demo converts only
#      when NumPy is installed.
import importlib.util

import torch
import torch.nn.functional as F


def crop_mask(masks, boxes):
    n, h, w = masks.shape
    x1, y1, x2, y2 = torch.chunk(boxes[:, :, None], 4, 1)
    r = torch.arange(w, device=masks.device, dtype=x1.dtype)[None, None, :]
    c = torch.arange(h, device=masks.device, dtype=x1.dtype)[None, :, None]
    return masks * ((r >= x1) * (r < x2) * (c >= y1) * (c < y2))


def process_mask(protos, masks_in, bboxes, shape, upsample=False):
    c, mh, mw = protos.shape
    ih, iw = shape
    masks = (masks_in @ protos.float().view(c, -1)).sigmoid().view(-1, mh, mw)
    downsampled_bboxes = bboxes.clone()
    downsampled_bboxes[:, 0] *= mw / iw
    downsampled_bboxes[:, 2] *= mw / iw
    downsampled_bboxes[:, 3] *= mh / ih
    downsampled_bboxes[:, 1] *= mh / ih
    masks = crop_mask(masks, downsampled_bboxes)
    if upsample:
        masks = F.interpolate(masks[None], shape, mode='bilinear', align_corners=False)[0]
    return masks.gt_(0.5)


def find_contour(mask):
    ys, xs = mask.nonzero()
    return [[int(x), int(y)] for x, y in zip(xs, ys)]


def masks2segments(masks, strategy='largest'):
    segments = []
    for x in masks.int().numpy().astype('uint8'):  # expect: DL204
        c = find_contour(x)
        segments.append(c if c else [[0, 0]])
    return segments


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    proto = torch.randn(8, 16, 16, device=device)
    coeffs = torch.randn(3, 8, device=device)
    boxes = torch.tensor([[0.0, 0.0, 32.0, 32.0], [8.0, 8.0, 48.0, 48.0], [16.0, 0.0, 64.0, 40.0]], device=device)
    masks = process_mask(proto, coeffs, boxes, (64, 64), upsample=True)
    if importlib.util.find_spec('numpy') is not None:
        for seg in reversed(masks2segments(masks)):
            print(len(seg))
    else:
        print(masks.shape, 'NumPy not installed: polygon conversion skipped')
