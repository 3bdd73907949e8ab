# source: https://github.com/maudzung/Complex-YOLOv4-Pytorch/issues/43
# error: RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.
# bug: the test script builds the detector from its config, loads the released pretrained weights
#      with a bare torch.load (they were saved on the author's third GPU) and only then moves the
#      model to the configured device (cuda:<gpu_idx> or the CPU). On a one-GPU machine the load
#      itself fails. The fix given in the thread passes map_location=torch.device('cuda:0') to that
#      torch.load, which is marked (DL301).
import argparse
import os
import tempfile

import torch
import torch.nn as nn


class Darknet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.1), nn.MaxPool2d(2))
        self.head = nn.Conv2d(8, 3 * (num_classes + 7), 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def create_model(configs):
    return Darknet(num_classes=configs.num_classes)


def parse_test_configs(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_path", type=str, required=True)
    parser.add_argument("--gpu_idx", type=int, default=0)
    parser.add_argument("--no_cuda", action="store_true")
    parser.add_argument("--num_classes", type=int, default=3)
    configs = parser.parse_args(argv)
    if not torch.cuda.is_available():
        configs.no_cuda = True
    configs.device = torch.device("cpu" if configs.no_cuda else "cuda:{}".format(configs.gpu_idx))
    return configs


def main(argv):
    configs = parse_test_configs(argv)
    model = create_model(configs)
    assert os.path.isfile(configs.pretrained_path), "No file at {}".format(configs.pretrained_path)
    model.load_state_dict(torch.load(configs.pretrained_path))  # expect: DL301
    model = model.to(device=configs.device)
    model.eval()
    with torch.no_grad():
        imgs_bev = torch.rand(1, 3, 32, 32).to(configs.device).float()
        print(model(imgs_bev).shape)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "complex_yolov4_mse_loss.pth")
    torch.save(Darknet().state_dict(), path)
    main(["--pretrained_path", path])
