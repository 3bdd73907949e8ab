# source: https://github.com/open-mmlab/mmdeploy/pull/1324
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the deploy task builds the PyTorch model for its configured device and loads the checkpoint
#      with the training library's load_checkpoint helper, which forwards map_location (default None)
#      to torch.load; a checkpoint trained on a GPU then cannot be loaded when the task's device is
#      'cpu' on a CPU-only machine. The merged PR passes a map_location chosen from the task's device
#      (the reviewer suggests map_location=self.device); the changed call is marked (DL301: torch.load
#      without map_location, reached through the helper).
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
            load_checkpoint(model, model_checkpoint)  # expect: DL301
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
