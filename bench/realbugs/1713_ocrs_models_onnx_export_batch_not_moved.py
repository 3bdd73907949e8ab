# source: https://github.com/robertknight/ocrs-models/issues/29
# error: RuntimeError in the traced forward's first convolution (a CPU sample image, CUDA weights) when exporting with --checkpoint ... --export on a machine with a GPU
# bug: both training scripts build the model on "cuda if available else cpu", restore the
#      checkpoint, and in --export mode trace the model for ONNX with a sample taken straight from
#      the validation loader, which yields CPU tensors. On a GPU machine the traced forward mixes
#      a CPU image with GPU weights. The fix (PR 30, commit 15173b2) moves the sample image to the
#      device in both scripts; the two export samples are marked (DL203: a model moved to a device
#      is called on a batch that never was). Both scripts' export paths are folded into this file.
import argparse
import importlib.util
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class PageImages(Dataset):
    def __init__(self, n=4, height=32, width=32):
        self.images = torch.rand(n, 1, height, width)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return {"image": self.images[idx], "path": "page{}.png".format(idx)}


class DetectionModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 1))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


class RecognitionModel(nn.Module):
    def __init__(self, n_chars=20):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.out = nn.Linear(8, n_chars)

    def forward(self, x):
        feats = self.conv(x).mean(2).transpose(1, 2)
        return self.out(feats).log_softmax(-1)


def load_checkpoint(path, model, device):
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])


def export_detection(args, device, val_dataloader):
    model = DetectionModel().to(device)
    load_checkpoint(args.checkpoint, model, device)
    test_batch = next(iter(val_dataloader))
    test_image = test_batch["image"][0:1]  # expect: DL203
    torch.onnx.export(model, test_image, args.export, input_names=["image"], output_names=["text_mask"],
                      dynamic_axes={"image": {0: "batch", 2: "height", 3: "width"}})


def export_recognition(args, device, val_dataloader):
    model = RecognitionModel().to(device)
    load_checkpoint(args.checkpoint_rec, model, device)
    test_batch = next(iter(val_dataloader))
    torch.onnx.export(
        model,
        test_batch["image"],  # expect: DL203
        args.export_rec,
        input_names=["line_image"],
        output_names=["chars"],
    )


def main(argv=None):
    tmp = tempfile.mkdtemp()
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", default=os.path.join(tmp, "det.pt"))
    parser.add_argument("--checkpoint-rec", default=os.path.join(tmp, "rec.pt"))
    parser.add_argument("--export", default=os.path.join(tmp, "text-detection.onnx"))
    parser.add_argument("--export-rec", default=os.path.join(tmp, "text-recognition.onnx"))
    args = parser.parse_args(argv)
    torch.save({"model": DetectionModel().state_dict()}, args.checkpoint)
    torch.save({"model": RecognitionModel().state_dict()}, args.checkpoint_rec)

    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    val_dataloader = DataLoader(PageImages(), batch_size=2)
    if importlib.util.find_spec("onnx") is None:
        print("onnx not installed: export skipped")
        return
    export_detection(args, device, val_dataloader)
    export_recognition(args, device, val_dataloader)
    print(os.path.getsize(args.export) > 0, os.path.getsize(args.export_rec) > 0)


if __name__ == "__main__":
    main([])
