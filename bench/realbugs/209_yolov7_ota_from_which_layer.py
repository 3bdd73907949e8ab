# source: https://github.com/WongKinYiu/yolov7/pull/1283
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: in the OTA label assignment, the per-layer id vector is built with torch.ones(...) on the CPU,
#      then indexed with fg_mask_inboxes, a mask computed from GPU predictions (rejected since torch 1.13).
import torch
import torch.nn.functional as F
from utils.general import box_iou, xywh2xyxy


class ComputeLossOTA:
    def __init__(self, model):
        det = model.model[-1]
        self.hyp = model.hyp
        for k in 'na', 'nc', 'nl', 'anchors', 'stride':
            setattr(self, k, getattr(det, k))

    def build_targets(self, p, targets, imgs):
        indices, anch = self.find_3_positive(p, targets)
        nl = len(p)
        matching_bs = [[] for _ in p]
        matching_targets = [[] for _ in p]

        for batch_idx in range(p[0].shape[0]):
            b_idx = targets[:, 0] == batch_idx
            this_target = targets[b_idx]
            if this_target.shape[0] == 0:
                continue
            txywh = this_target[:, 2:6] * imgs[batch_idx].shape[1]
            txyxy = xywh2xyxy(txywh)

            pxyxys, p_cls, p_obj, from_which_layer, all_b = [], [], [], [], []
            for i, pi in enumerate(p):
                b, a, gj, gi = indices[i]
                idx = (b == batch_idx)
                b, a, gj, gi = b[idx], a[idx], gj[idx], gi[idx]
                all_b.append(b)
                from_which_layer.append(torch.ones(size=(len(b),)) * i)  # expect: DL202
                fg_pred = pi[b, a, gj, gi]
                p_obj.append(fg_pred[:, 4:5])
                p_cls.append(fg_pred[:, 5:])
                grid = torch.stack([gi, gj], dim=1)
                pxy = (fg_pred[:, :2].sigmoid() * 2. - 0.5 + grid) * self.stride[i]
                pwh = (fg_pred[:, 2:4].sigmoid() * 2) ** 2 * anch[i][idx] * self.stride[i]
                pxyxys.append(xywh2xyxy(torch.cat([pxy, pwh], dim=-1)))

            pxyxys = torch.cat(pxyxys, dim=0)
            if pxyxys.shape[0] == 0:
                continue
            p_obj = torch.cat(p_obj, dim=0)
            p_cls = torch.cat(p_cls, dim=0)
            from_which_layer = torch.cat(from_which_layer, dim=0)
            all_b = torch.cat(all_b, dim=0)

            pair_wise_iou = box_iou(txyxy, pxyxys)
            pair_wise_iou_loss = -torch.log(pair_wise_iou + 1e-8)
            top_k, _ = torch.topk(pair_wise_iou, min(10, pair_wise_iou.shape[1]), dim=1)
            dynamic_ks = torch.clamp(top_k.sum(1).int(), min=1)
            gt_cls_per_image = F.one_hot(this_target[:, 1].to(torch.int64), self.nc).float() \
                .unsqueeze(1).repeat(1, pxyxys.shape[0], 1)
            num_gt = this_target.shape[0]
            cls_preds_ = p_cls.float().unsqueeze(0).repeat(num_gt, 1, 1).sigmoid_() \
                * p_obj.unsqueeze(0).repeat(num_gt, 1, 1).sigmoid_()
            y = cls_preds_.sqrt_()
            pair_wise_cls_loss = F.binary_cross_entropy_with_logits(
                torch.log(y / (1 - y)), gt_cls_per_image, reduction="none").sum(-1)
            cost = pair_wise_cls_loss + 3.0 * pair_wise_iou_loss

            matching_matrix = torch.zeros_like(cost)
            for gt_idx in range(num_gt):
                _, pos_idx = torch.topk(cost[gt_idx], k=dynamic_ks[gt_idx].item(), largest=False)
                matching_matrix[gt_idx][pos_idx] = 1.0
            fg_mask_inboxes = matching_matrix.sum(0) > 0.0
            matched_gt_inds = matching_matrix[:, fg_mask_inboxes].argmax(0)

            from_which_layer = from_which_layer[fg_mask_inboxes]  # expect: DL207
            all_b = all_b[fg_mask_inboxes]
            this_target = this_target[matched_gt_inds]
            for i in range(nl):
                layer_idx = from_which_layer == i
                matching_bs[i].append(all_b[layer_idx])
                matching_targets[i].append(this_target[layer_idx])

        for i in range(nl):
            matching_bs[i] = torch.cat(matching_bs[i], dim=0)
            matching_targets[i] = torch.cat(matching_targets[i], dim=0)
        return matching_bs, matching_targets

    def find_3_positive(self, p, targets):
        raise NotImplementedError
