# source: https://github.com/open-mmlab/mmocr/pull/567
# error: (PR motivation, following open-mmlab/mmdetection#6405) checkpoints are restored onto the GPU they were saved from instead of the requested device
# bug: init_detector only maps the checkpoint to the CPU when the requested device is 'cpu'; for
#      any GPU device it passes map_location=None, so the tensors land on the device recorded in the
#      checkpoint (cuda:0 for every caller, or an error when that GPU does not exist). The fix always
#      maps to the CPU and moves the model to the requested device afterwards. The loader here is a
#      small stand-in for mmcv's load_checkpoint, which calls torch.load.
import torch
import torch.nn as nn


def load_checkpoint(model, filename, map_location=None):
    checkpoint = torch.load(filename, map_location=map_location)
    model.load_state_dict(checkpoint.get("state_dict", checkpoint))
    return checkpoint


class TextDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 1, 1)
        self.CLASSES = None

    def forward(self, img):
        return torch.sigmoid(self.head(torch.relu(self.backbone(img))))


def init_detector(checkpoint=None, device="cuda:0"):
    model = TextDetector()
    if checkpoint is not None:
        map_loc = "cpu" if device == "cpu" else None  # expect: DL301
        checkpoint = load_checkpoint(model, checkpoint, map_location=map_loc)  # expect: DL301
        model.CLASSES = checkpoint.get("meta", {}).get("CLASSES", ("text",))
    model.to(device)
    model.eval()
    return model


if __name__ == "__main__":
    device = "cuda:1" if torch.cuda.device_count() > 1 else "cpu"
    torch.save({"state_dict": TextDetector().state_dict(), "meta": {}}, "det.pth")
    model = init_detector("det.pth", device=device)
    print(model(torch.randn(1, 3, 32, 32, device=device)).shape)
