# source: https://github.com/open-mmlab/mmdeploy/pull/1324
# fixed twin: the checkpoint is loaded with map_location set to the CPU when the task's device is 'cpu', as the merged PR does.
import os
import tempfile

import torch
import torch.nn as nn


def load_checkpoint(model, filename, map_location=None, strict=False):
    checkpoint = torch.load(filename, map_location=map_location)
    state_dict = checkpoint.get("state_dict", checkpoint)
    model.load_state_dict(state_dict, strict=strict)
    return checkpoint


class Classifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, num_classes)

    def forward(self, img):
        return self.head(self.backbone(img).flatten(1))


MODELS = {"Classifier": Classifier}


class ClassificationTask:
    def __init__(self, model_cfg, device):
        self.model_cfg = model_cfg
        self.device = device

    def build_pytorch_model(self, model_checkpoint=None):
        model = MODELS[self.model_cfg["type"]](**self.model_cfg.get("args", {}))
        if model_checkpoint is not None:
            map_location = None
            if self.device == "cpu":
                map_location = torch.device("cpu")
            load_checkpoint(model, model_checkpoint, map_location=map_location)
        model = model.to(self.device)
        return model.eval()

    @torch.no_grad()
    def run_inference(self, model, img):
        return model(img.to(self.device)).softmax(-1)


if __name__ == "__main__":
    ckpt = os.path.join(tempfile.mkdtemp(), "epoch_12.pth")
    torch.save({"state_dict": Classifier().state_dict(), "meta": {}}, ckpt)
    task = ClassificationTask({"type": "Classifier"}, device="cpu")
    model = task.build_pytorch_model(ckpt)
    print(task.run_inference(model, torch.randn(1, 3, 16, 16)))
