# source: https://github.com/WongKinYiu/yolov7/pull/530
# error: crash when training on the CPU (and targets on another GPU) in ComputeLossOTA.build_targets
# bug: when a detection layer gets no matched targets, build_targets fills its outputs with empty
#      tensors created on the hard-coded device 'cuda:0' instead of the targets' device.
import torch


class ComputeLossOTA:
    def __init__(self, model):
        det = model.model[-1]
        for k in 'na', 'nc', 'nl', 'anchors', 'stride':
            setattr(self, k, getattr(det, k))

    def build_targets(self, p, targets, imgs):
        nl = len(p)
        matching_bs = [[] for _ in p]
        matching_as = [[] for _ in p]
        matching_targets = [[] for _ in p]
        for batch_idx in range(p[0].shape[0]):
            this_target = targets[targets[:, 0] == batch_idx]
            if this_target.shape[0] == 0:
                continue
            for i in range(nl):
                layer_idx = this_target[:, 1] % nl == i
                matching_bs[i].append(this_target[layer_idx, 0].long())
                matching_as[i].append(this_target[layer_idx, 1].long() % self.na)
                matching_targets[i].append(this_target[layer_idx])

        for i in range(nl):
            if matching_targets[i] != []:
                matching_bs[i] = torch.cat(matching_bs[i], dim=0)
                matching_as[i] = torch.cat(matching_as[i], dim=0)
                matching_targets[i] = torch.cat(matching_targets[i], dim=0)
            else:
                matching_bs[i] = torch.tensor([], device=targets.device, dtype=torch.int64)
                matching_as[i] = torch.tensor([], device=targets.device, dtype=torch.int64)
                matching_targets[i] = torch.tensor([], device=targets.device, dtype=torch.int64)
        return matching_bs, matching_as, matching_targets
