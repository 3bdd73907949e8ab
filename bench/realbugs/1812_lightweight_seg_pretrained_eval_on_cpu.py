# source: https://github.com/Tramac/Lightweight-Segmentation/issues/13
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False (evaluating the released MobileNet segmentation model on a CPU machine)
# bug: the model zoo's builder restores the best checkpoint (saved from GPU training) with a bare
#      torch.load inside get_mobilenet_seg; the evaluation script asks for the pretrained model and
#      only then moves it to its --device, so a CPU-only evaluation fails inside the builder. The
#      maintainer's answer changes that load to map to the CPU (map_location='cpu'); the line is
#      marked (DL301).
import argparse
import os
import tempfile

import torch
import torch.nn as nn

acronyms = {"citys": "citys", "pascal_voc": "pascal_voc"}


def get_model_file(name, root):
    return os.path.join(root, name + ".pth")


class MobileNetSeg(nn.Module):
    def __init__(self, nclass=19):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU6())
        self.head = nn.Conv2d(16, nclass, 1)

    def forward(self, x):
        out = self.head(self.base(x))
        return nn.functional.interpolate(out, size=x.shape[2:], mode="bilinear", align_corners=True)


def get_mobilenet_seg(dataset="citys", pretrained=False, root="~/.torch/models"):
    model = MobileNetSeg()
    if pretrained:
        model.load_state_dict(torch.load(get_model_file("mobilenet_%s_best_model" % acronyms[dataset], root=root)))  # expect: DL301
    return model


class Evaluator:
    def __init__(self, args):
        self.device = torch.device(args.device)
        self.model = get_mobilenet_seg(args.dataset, pretrained=True, root=args.save_dir).to(self.device)

    def eval(self, images):
        self.model.eval()
        with torch.no_grad():
            return self.model(images.to(self.device)).argmax(1)


if __name__ == "__main__":
    save_dir = tempfile.mkdtemp()
    torch.save(MobileNetSeg().state_dict(), get_model_file("mobilenet_citys_best_model", save_dir))
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="citys")
    parser.add_argument("--save-dir", default=save_dir)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    print(Evaluator(parser.parse_args([])).eval(torch.rand(2, 3, 32, 32)).shape)
