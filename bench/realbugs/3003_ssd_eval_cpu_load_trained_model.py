# source: https://github.com/amdegroot/ssd.pytorch/issues/250
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you
#        are running on a CPU-only machine, please use torch.load with map_location='cpu' to map your storages to the CPU.
#        (python eval.py --cuda False)
# bug: eval.py offers --cuda False and then keeps the model and the images on the CPU (the default tensor type is the
#      CPU one, net.cuda() and x.cuda() are skipped), but it restores the trained weights - a state_dict saved from the
#      GPU during training - with a bare torch.load(args.trained_model), which puts every storage back on the GPU it
#      was saved from. On a CPU-only machine the load fails. A commenter's fix, which the reporter confirmed, is
#      torch.load(args.trained_model, 'cpu'); the repository's eval.py in the index still has the bare load (no fix
#      landed, so no twin). The marker is on that load (DL301). The SSD network, VOC dataset and VOC metric are
#      reduced to a small detector, random images and a score print.
import argparse
import os
import tempfile
import time

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn


def str2bool(v):
    return v.lower() in ("yes", "true", "t", "1")


parser = argparse.ArgumentParser(description="Single Shot MultiBox Detection")
parser.add_argument("--trained_model", default=os.path.join(tempfile.mkdtemp(), "ssd300_mAP_77.43_v2.pth"), type=str)
parser.add_argument("--confidence_threshold", default=0.01, type=float)
parser.add_argument("--top_k", default=5, type=int)
parser.add_argument("--cuda", default="False", type=str2bool)
args = parser.parse_args([])

VOC_CLASSES = ("aeroplane", "bicycle", "bird", "boat", "bottle")


class Timer(object):
    def __init__(self):
        self.total_time, self.calls, self.start_time = 0.0, 0, 0.0

    def tic(self):
        self.start_time = time.time()

    def toc(self, average=True):
        self.total_time += time.time() - self.start_time
        self.calls += 1
        return self.total_time / self.calls


class SSD(nn.Module):
    def __init__(self, phase, size, num_classes):
        super().__init__()
        self.phase, self.size, self.num_classes = phase, size, num_classes
        self.vgg = nn.Sequential(nn.Conv2d(3, 16, 3, stride=4, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.conf = nn.Conv2d(16, num_classes, 3, padding=1)
        self.loc = nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, x):
        h = self.vgg(x)
        conf = self.conf(h).flatten(2).transpose(1, 2).softmax(-1)
        loc = self.loc(h).flatten(2).transpose(1, 2).sigmoid()
        scores = conf.transpose(1, 2).unsqueeze(-1)
        boxes = loc.unsqueeze(1).expand(-1, self.num_classes, -1, -1)
        return torch.cat([scores, boxes], dim=-1)


def build_ssd(phase, size=300, num_classes=21):
    return SSD(phase, size, num_classes)


def test_net(net, cuda, dataset, top_k, im_size=300, thresh=0.05):
    num_images = len(dataset)
    all_boxes = [[[] for _ in range(num_images)] for _ in range(len(VOC_CLASSES) + 1)]
    _t = {"im_detect": Timer()}
    for i in range(num_images):
        im, h, w = dataset[i]
        x = im.unsqueeze(0)
        if args.cuda:
            x = x.cuda()
        _t["im_detect"].tic()
        detections = net(x).data
        detect_time = _t["im_detect"].toc(average=True)
        for j in range(1, detections.size(1)):
            dets = detections[0, j, :]
            dets = dets[dets[:, 0] > thresh][:top_k]
            boxes = dets[:, 1:] * torch.tensor([w, h, w, h], device=dets.device)
            all_boxes[j][i] = torch.cat([boxes, dets[:, :1]], dim=1).cpu()
        print("im_detect: {:d}/{:d} {:.3f}s".format(i + 1, num_images, detect_time))
    return all_boxes


def train_and_save():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = build_ssd("train", 300, len(VOC_CLASSES) + 1).to(device)
    torch.save(net.state_dict(), args.trained_model)


if __name__ == "__main__":
    train_and_save()
    num_classes = len(VOC_CLASSES) + 1
    net = build_ssd("test", 300, num_classes)
    net.load_state_dict(torch.load(args.trained_model))  # expect: DL301
    net.eval()
    print("Finished loading model!")
    dataset = [(torch.randn(3, 300, 300), 375, 500) for _ in range(3)]
    if args.cuda:
        net = net.cuda()
        cudnn.benchmark = True
    with torch.no_grad():
        all_boxes = test_net(net, args.cuda, dataset, args.top_k, 300, thresh=args.confidence_threshold)
    print(sum(len(b) for cls in all_boxes for b in cls if len(b)))
