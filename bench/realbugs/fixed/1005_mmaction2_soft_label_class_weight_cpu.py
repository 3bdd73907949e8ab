# source: https://github.com/open-mmlab/mmaction2/pull/1188
# fixed twin: the soft-label path moves the class weights to the scores' device before using them (commit a971942).
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseWeightedLoss(nn.Module):
    def __init__(self, loss_weight=1.0):
        super().__init__()
        self.loss_weight = loss_weight

    def forward(self, *args, **kwargs):
        return self._forward(*args, **kwargs) * self.loss_weight


class CrossEntropyLoss(BaseWeightedLoss):
    def __init__(self, loss_weight=1.0, class_weight=None):
        super().__init__(loss_weight=loss_weight)
        self.class_weight = None
        if class_weight is not None:
            self.class_weight = torch.Tensor(class_weight)

    def _forward(self, cls_score, label, **kwargs):
        if cls_score.size() == label.size():
            lsm = F.log_softmax(cls_score, 1)
            if self.class_weight is not None:
                self.class_weight = self.class_weight.to(cls_score.device)
                lsm = lsm * self.class_weight.unsqueeze(0)
            loss_cls = -(label * lsm).sum(1)
            if self.class_weight is not None:
                loss_cls = loss_cls.sum() / torch.sum(self.class_weight.unsqueeze(0) * label)
            else:
                loss_cls = loss_cls.mean()
        else:
            if self.class_weight is not None:
                kwargs["weight"] = self.class_weight.to(cls_score.device)
            loss_cls = F.cross_entropy(cls_score, label, **kwargs)
        return loss_cls


LOSSES = {"CrossEntropyLoss": CrossEntropyLoss}


def build_loss(cfg):
    cfg = dict(cfg)
    return LOSSES[cfg.pop("type")](**cfg)


class TSNHead(nn.Module):
    def __init__(self, num_classes, in_channels, loss_cls):
        super().__init__()
        self.fc_cls = nn.Linear(in_channels, num_classes)
        self.loss_cls = build_loss(loss_cls)

    def forward(self, x):
        return self.fc_cls(x.mean(dim=(2, 3)))

    def loss(self, cls_score, labels):
        return {"loss_cls": self.loss_cls(cls_score, labels)}


class Recognizer2D(nn.Module):
    def __init__(self, cls_head):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.cls_head = TSNHead(**cls_head)

    def forward_train(self, imgs, labels):
        return self.cls_head.loss(self.cls_head(self.backbone(imgs)), labels)


def mixup(imgs, label, num_classes, alpha=0.2):
    one_hot = F.one_hot(label, num_classes=num_classes).float()
    lam = float(torch.distributions.Beta(alpha, alpha).sample())
    perm = torch.randperm(imgs.size(0), device=imgs.device)
    return lam * imgs + (1 - lam) * imgs[perm], lam * one_hot + (1 - lam) * one_hot[perm]


if __name__ == "__main__":
    num_classes = 4
    cfg = dict(num_classes=num_classes, in_channels=8,
               loss_cls=dict(type="CrossEntropyLoss", class_weight=[1.0, 2.0, 1.0, 0.5]))
    model = Recognizer2D(cfg)
    if torch.cuda.is_available():
        model = model.cuda()
    device = next(model.parameters()).device
    imgs = torch.randn(4, 3, 8, 8).to(device)
    labels = torch.randint(0, num_classes, (4,)).to(device)
    imgs, soft = mixup(imgs, labels, num_classes)
    print({k: round(float(v), 4) for k, v in model.forward_train(imgs, soft).items()})
