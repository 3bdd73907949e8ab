# source: https://github.com/akarasman/yolo-heatmaps/issues/13
# fixed twin: the zero that replaces the outliers is made on the explainer's device (device=self.device), as the maintainer's update does.
import torch
import torch.nn as nn


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.cls_head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        return self.cls_head(torch.relu(self.backbone(x)))


class YOLOv8LRP(nn.Module):
    def __init__(self, model, device="cuda" if torch.cuda.is_available() else "cpu"):
        super().__init__()
        self.device = device
        self.model = model.to(device)

    def relevance_to_input(self, frame, cls):
        frame = frame.unsqueeze(0).requires_grad_(True)
        score = self.model(frame)[:, cls].sum()
        (grad,) = torch.autograd.grad(score, frame)
        return grad * frame

    def explain(self, frame, cls=0):
        lrp_out = self.relevance_to_input(frame.to(self.device), cls)
        lrp_p = lrp_out[0].sum(dim=0).detach()
        threshold = torch.quantile(lrp_p, 0.98)
        outlier_mask = lrp_p < threshold
        explanation = torch.where(outlier_mask, lrp_p, torch.tensor(0.0, device=self.device))
        return explanation

    def forward(self, x):
        return self.model(x)


if __name__ == "__main__":
    lrp = YOLOv8LRP(TinyDetector())
    heat = lrp.explain(torch.rand(3, 32, 32), cls=2)
    print(heat.shape, float(heat.abs().sum()))
