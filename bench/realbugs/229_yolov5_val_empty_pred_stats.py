# source: https://github.com/ultralytics/yolov5/pull/7539
# error: RuntimeError: Expected all tensors to be on the same device (torch.cat over val stats)
# bug: for an image with labels but no predictions, val.py appends placeholder conf/class tensors made
#      by torch.zeros((3, 0)) on the CPU next to the CUDA `correct` tensors; the final torch.cat over
#      the collected stats then mixes devices.
import torch
from utils.general import non_max_suppression, scale_coords, xywh2xyxy
from utils.metrics import ap_per_class
from utils.torch_utils import select_device


def process_batch(detections, labels, iouv):
    correct = torch.zeros(detections.shape[0], iouv.shape[0], dtype=torch.bool, device=iouv.device)
    return correct


@torch.no_grad()
def run(model, dataloader, device='', conf_thres=0.001, iou_thres=0.6, single_cls=False):
    device = select_device(device)
    model.to(device).eval()
    iouv = torch.linspace(0.5, 0.95, 10, device=device)  # iou vector for mAP@0.5:0.95
    niou = iouv.numel()
    stats = []
    for batch_i, (im, targets, paths, shapes) in enumerate(dataloader):
        im = im.to(device, non_blocking=True).float() / 255
        targets = targets.to(device)
        nb, _, height, width = im.shape
        out, train_out = model(im)
        targets[:, 2:] *= torch.tensor((width, height, width, height), device=device)
        out = non_max_suppression(out, conf_thres, iou_thres, multi_label=True, agnostic=single_cls)

        for si, pred in enumerate(out):
            labels = targets[targets[:, 0] == si, 1:]
            nl, npr = labels.shape[0], pred.shape[0]
            shape = shapes[si][0]
            correct = torch.zeros(npr, niou, dtype=torch.bool, device=device)

            if npr == 0:
                if nl:
                    stats.append((correct, *torch.zeros((3, 0))))  # expect: DL202
                continue

            predn = pred.clone()
            scale_coords(im[si].shape[1:], predn[:, :4], shape, shapes[si][1])
            if nl:
                tbox = xywh2xyxy(labels[:, 1:5])
                scale_coords(im[si].shape[1:], tbox, shape, shapes[si][1])
                labelsn = torch.cat((labels[:, 0:1], tbox), 1)
                correct = process_batch(predn, labelsn, iouv)
            stats.append((correct, pred[:, 4], pred[:, 5], labels[:, 0]))

    stats = [torch.cat(x, 0).cpu().numpy() for x in zip(*stats)]  # to numpy
    if len(stats) and stats[0].any():
        tp, fp, p, r, f1, ap, ap_class = ap_per_class(*stats)
        return p.mean(), r.mean(), ap[:, 0].mean(), ap.mean(1).mean()
    return 0.0, 0.0, 0.0, 0.0
