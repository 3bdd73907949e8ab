# source: https://github.com/maudzung/Complex-YOLOv4-Pytorch/issues/43
# fixed twin: the pretrained weights are loaded with map_location (the thread's torch.device('cuda:0'); here the configured device, so the twin runs on the CPU).
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
    model.load_state_dict(torch.load(configs.pretrained_path, map_location=configs.device))
    model = model.to(device=configs.device)
    model.eval()
    with torch.no_grad():
        imgs_bev = torch.rand(1, 3, 32, 32).to(configs.device).float()
        print(model(imgs_bev).shape)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "complex_yolov4_mse_loss.pth")
    torch.save(Darknet().state_dict(), path)
    main(["--pretrained_path", path])
