# source: https://github.com/open-mmlab/mmsegmentation/pull/152
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the inference API's init_segmentor(config, checkpoint, device='cpu') builds the model on the
#      CPU and loads the checkpoint with the framework's load_checkpoint helper without a
#      map_location, so the helper's torch.load restores the GPU-saved tensors onto CUDA and CPU
#      inference with a released checkpoint fails. The PR passes map_location ('cpu' when the
#      device is the CPU) at that call; the call is marked (DL301).
import os
import tempfile

import torch
import torch.nn as nn


def load_checkpoint(model, filename, map_location=None, strict=False):
    checkpoint = torch.load(filename, map_location=map_location)
    state_dict = checkpoint.get("state_dict", checkpoint)
    model.load_state_dict(state_dict, strict=strict)
    return checkpoint


class EncoderDecoder(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.decode_head = nn.Conv2d(8, num_classes, 1)

    def forward(self, img):
        return self.decode_head(self.backbone(img))


def build_segmentor(config):
    return EncoderDecoder(num_classes=config["num_classes"])


def init_segmentor(config, checkpoint=None, device="cuda:0"):
    model = build_segmentor(config)
    if checkpoint is not None:
        checkpoint = load_checkpoint(model, checkpoint)  # expect: DL301
        model.CLASSES = checkpoint.get("meta", {}).get("CLASSES")
    model.cfg = config
    model.to(device)
    model.eval()
    return model


def inference_segmentor(model, img):
    device = next(model.parameters()).device
    with torch.no_grad():
        return model(img.to(device)).argmax(dim=1)


if __name__ == "__main__":
    config = {"num_classes": 4}
    path = os.path.join(tempfile.mkdtemp(), "segformer.pth")
    train_device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.save({"state_dict": build_segmentor(config).to(train_device).state_dict(), "meta": {"CLASSES": ["a", "b", "c", "d"]}}, path)
    model = init_segmentor(config, path, device="cpu")
    print(inference_segmentor(model, torch.rand(1, 3, 16, 16)).shape)
