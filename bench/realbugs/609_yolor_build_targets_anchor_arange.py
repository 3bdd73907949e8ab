# source: https://github.com/WongKinYiu/yolor/pull/284
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: build_targets makes the anchor-id tensor with torch.arange(na) on the CPU and filters it with
#      the mask j, computed from targets and anchors on the GPU. The fix moves the anchor ids to the
#      targets' device (its other edits: a bare j.to(...) whose result is thrown away, and .long()
#      casts, are not device fixes and are not marked; under current PyTorch the pre-fix clamp_ with
#      float bounds also fails, which those casts address - on a GPU the device error comes first).
import torch
import torch.nn as nn


class YOLOLayer(nn.Module):
    def __init__(self, anchors, stride):
        super().__init__()
        self.register_buffer("anchor_vec", torch.tensor(anchors, dtype=torch.float32) / stride)


class Darknet(nn.Module):
    def __init__(self):
        super().__init__()
        self.module_list = nn.ModuleList([nn.Conv2d(3, 18, 1), YOLOLayer([[10, 13], [16, 30], [33, 23]], 8)])
        self.yolo_layers = [1]
        self.hyp = {"anchor_t": 4.0}


def build_targets(p, targets, model):
    nt = targets.shape[0]
    tcls, tbox, indices, anch = [], [], [], []
    gain = torch.ones(6, device=targets.device)
    for i, jj in enumerate(model.yolo_layers):
        anchors = model.module_list[jj].anchor_vec
        gain[2:] = torch.tensor(p[i].shape)[[3, 2, 3, 2]]
        a, t, offsets = [], targets * gain, 0
        if nt:
            na = anchors.shape[0]
            at = torch.arange(na).view(na, 1).repeat(1, nt)  # expect: DL202
            r = t[None, :, 4:6] / anchors[:, None]
            j = torch.max(r, 1. / r).max(2)[0] < model.hyp["anchor_t"]
            a, t = at[j], t.repeat(na, 1, 1)[j]
        b, c = t[:, :2].long().T
        gxy = t[:, 2:4]
        gwh = t[:, 4:6]
        gij = (gxy - offsets).long()
        gi, gj = gij.T
        indices.append((b, a, gj.clamp_(0, gain[3] - 1), gi.clamp_(0, gain[2] - 1)))
        tbox.append(torch.cat((gxy - gij, gwh), 1))
        anch.append(anchors[a])
        tcls.append(c)
    return tcls, tbox, indices, anch


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Darknet().to(device)
    p = [torch.randn(2, 3, 20, 20, 6, device=device)]
    targets = torch.tensor([[0, 1, 0.5, 0.5, 0.2, 0.3], [1, 0, 0.3, 0.6, 0.1, 0.1]], device=device)
    tcls, tbox, indices, anch = build_targets(p, targets, model)
    print([c.shape for c in tcls], [a.shape for a in anch])
