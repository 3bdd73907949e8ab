# source: https://github.com/yhenon/pytorch-retinanet/issues/174
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for ... (torch.stack of the regression losses)
# bug: the focal loss appends one regression loss per image. For an image without annotations the
#      GPU branch (taken when torch.cuda.is_available()) builds the classification part on the GPU
#      but appends a host zero, torch.tensor(0).float(), as the regression loss; when the batch also
#      holds annotated images, whose regression losses live on the GPU, the final torch.stack mixes
#      the devices. The fix (PR 220, commit 39938d2) appends torch.tensor(0).float().cuda() in that
#      branch. The marked line is the one the fix changed (DL202: a factory without device= whose
#      tensor meets the GPU losses).
import torch
import torch.nn as nn


def calc_iou(a, b):
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    iw = torch.min(a[:, 2:3], b[:, 2]) - torch.max(a[:, 0:1], b[:, 0])
    ih = torch.min(a[:, 3:4], b[:, 3]) - torch.max(a[:, 1:2], b[:, 1])
    inter = iw.clamp(min=0) * ih.clamp(min=0)
    ua = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])).unsqueeze(1) + area - inter
    return inter / ua.clamp(min=1e-8)


class FocalLoss(nn.Module):
    def forward(self, classifications, regressions, anchors, annotations):
        alpha, gamma = 0.25, 2.0
        classification_losses = []
        regression_losses = []
        anchor = anchors[0]
        for j in range(classifications.shape[0]):
            classification = classifications[j].clamp(1e-4, 1.0 - 1e-4)
            regression = regressions[j]
            boxes = annotations[j]
            boxes = boxes[boxes[:, 4] != -1]

            if boxes.shape[0] == 0:
                if torch.cuda.is_available():
                    alpha_factor = 1.0 - torch.ones(classification.shape).cuda() * alpha
                    bce = -torch.log(1.0 - classification)
                    classification_losses.append((alpha_factor * classification ** gamma * bce).sum())
                    regression_losses.append(torch.tensor(0).float())  # expect: DL202
                else:
                    alpha_factor = 1.0 - torch.ones(classification.shape) * alpha
                    bce = -torch.log(1.0 - classification)
                    classification_losses.append((alpha_factor * classification ** gamma * bce).sum())
                    regression_losses.append(torch.tensor(0).float())
                continue

            iou_max, iou_argmax = calc_iou(anchor, boxes[:, :4]).max(dim=1)
            positive = iou_max >= 0.5
            targets = torch.zeros(classification.shape, device=classification.device)
            assigned = boxes[iou_argmax]
            targets[positive, assigned[positive, 4].long()] = 1
            bce = -(targets * torch.log(classification) + (1 - targets) * torch.log(1 - classification))
            classification_losses.append(bce.sum() / positive.sum().clamp(min=1))
            if positive.sum() > 0:
                diff = (assigned[positive, :4] - anchor[positive]) / 10.0 - regression[positive]
                regression_losses.append(diff.abs().mean())
            else:
                if torch.cuda.is_available():
                    regression_losses.append(torch.tensor(0).float().cuda())
                else:
                    regression_losses.append(torch.tensor(0).float())

        return torch.stack(classification_losses).mean(), torch.stack(regression_losses).mean()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    head = nn.Linear(4, 3 + 4).to(device)
    anchors = torch.tensor([[[0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0], [20.0, 20.0, 30.0, 30.0]]],
                           device=device)
    out = head(anchors.repeat(2, 1, 1) / 30.0)
    classifications, regressions = out[..., :3].sigmoid(), out[..., 3:]
    annotations = torch.tensor([[[0.0, 0.0, 10.0, 10.0, 1.0]],
                                [[-1.0, -1.0, -1.0, -1.0, -1.0]]], device=device)
    cls_loss, reg_loss = FocalLoss()(classifications, regressions, anchors, annotations)
    (cls_loss + reg_loss).backward()
    print(cls_loss.item(), reg_loss.item())
