# source: https://github.com/Lightning-AI/pytorch-lightning/issues/2638
# fixed twin: the priors and the multibox loss are made in training_step with .to(self.device), where self.device is the training device (the reporter's working version).
import torch
import torch.nn as nn

try:
    import pytorch_lightning as pl
except ImportError:  # a stand-in so the reproduction runs where Lightning is not installed
    class _LightningModule(nn.Module):
        @property
        def device(self):
            return next(self.parameters(), torch.empty(0)).device

    class pl:
        LightningModule = _LightningModule


class PriorBox:
    def __init__(self, config):
        self.sizes = config["feature_maps"]

    def create_priors(self):
        boxes = [torch.tensor([(i + 0.5) / s, (j + 0.5) / s, 1.0 / s, 1.0 / s]) for s in self.sizes for i in range(s) for j in range(s)]
        return torch.stack(boxes)


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, priors, cfg, device):
        super().__init__()
        self.num_classes = num_classes
        self.priors = priors
        self.device = device

    def forward(self, locs, confs, bboxes, labels):
        encoded = (bboxes[:, None, :2] - self.priors[None, :, :2]) / self.priors[None, :, 2:]
        loc_loss = (locs[..., :2] - encoded).abs().mean()
        conf_loss = nn.functional.cross_entropy(confs.reshape(-1, self.num_classes), labels.repeat_interleave(confs.shape[1]))
        return loc_loss, conf_loss


class SSD300(nn.Module):
    def __init__(self, n_priors, num_classes):
        super().__init__()
        self.n_priors, self.num_classes = n_priors, num_classes
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.loc = nn.Linear(8, n_priors * 4)
        self.conf = nn.Linear(8, n_priors * num_classes)

    def forward(self, x):
        h = self.backbone(x)
        return self.loc(h).view(-1, self.n_priors, 4), self.conf(h).view(-1, self.n_priors, self.num_classes)


class SSD_simple(pl.LightningModule):
    def __init__(self, config: dict):
        super().__init__()
        self.config = config
        self.model = SSD300(sum(s * s for s in config["feature_maps"]), config["num_classes"])

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_nb):
        images, bboxes, labels = batch
        locs, confs = self(images)
        priors = PriorBox(self.config).create_priors().to(self.device)
        multibox_loss = MultiBoxLoss(num_classes=self.config["num_classes"], priors=priors, cfg=self.config, device=self.device)
        loc_loss, conf_loss = multibox_loss(locs, confs, bboxes, labels)
        return {"loss": loc_loss + conf_loss}


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SSD_simple({"feature_maps": [4, 2], "num_classes": 3}).to(device)
    batch = (torch.rand(2, 3, 32, 32, device=device), torch.rand(2, 4, device=device), torch.randint(0, 3, (2,), device=device))
    print(model.training_step(batch, 0)["loss"].item())
