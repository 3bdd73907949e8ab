# source: https://github.com/Tramac/awesome-semantic-segmentation-pytorch/issues/213
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you
#        are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your
#        storages to the CPU. (scripts/eval.py -> Evaluator.__init__ -> get_segmentation_model -> get_fcn16s, at the
#        model.load_state_dict(torch.load(...)) line)
# bug: scripts/eval.py chooses args.device = "cpu" when CUDA is unavailable (or --no-cuda is given) and moves the model
#      there, but the model zoo's get_fcn16s restores the pretrained weights with
#      map_location=torch.device(kwargs['local_rank']): an integer device, i.e. cuda:<local_rank> (cuda:0 by default),
#      whatever device the evaluator chose. On a machine without a usable GPU the load fails. The issue is open with no
#      answer (no fix, so no twin); the cause is read from scripts/eval.py and core/models/fcn.py in the index. The
#      marker is on the torch.load the traceback points to (DL301: checkpoint mapped to a hard-coded CUDA device; a
#      rank used as the device, DL309, is the other candidate). The model zoo, dataset and metric are reduced.
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

MODEL_ROOT = tempfile.mkdtemp()


def get_model_file(name, root=MODEL_ROOT):
    return os.path.join(os.path.expanduser(root), name + ".pth")


class FCN16s(nn.Module):
    def __init__(self, nclass, backbone="vgg16", aux=False, pretrained_base=True, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.aux = aux
        self.pretrained = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), norm_layer(16), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Conv2d(16, nclass, 1)

    def forward(self, x):
        size = x.size()[2:]
        out = self.head(self.pretrained(x))
        return tuple([F.interpolate(out, size, mode="bilinear", align_corners=True)])


NUM_CLASS = {"pascal_voc": 21, "citys": 19}


def get_fcn16s(dataset="pascal_voc", backbone="vgg16", pretrained=False, root=MODEL_ROOT, pretrained_base=True,
               **kwargs):
    acronyms = {"pascal_voc": "pascal_voc", "citys": "citys"}
    model = FCN16s(NUM_CLASS[dataset], backbone=backbone, pretrained_base=pretrained_base, **kwargs)
    if pretrained:
        device = torch.device(kwargs["local_rank"])
        model.load_state_dict(torch.load(get_model_file("fcn16s_%s_%s" % (backbone, acronyms[dataset]), root=root), map_location=device))  # expect: DL301
    return model


def get_segmentation_model(model, **kwargs):
    models = {"fcn16s": get_fcn16s}
    return models[model](**kwargs)


class SegmentationMetric:
    def __init__(self, nclass):
        self.nclass = nclass
        self.reset()

    def reset(self):
        self.correct, self.labeled = 0, 0

    def update(self, preds, labels):
        predict = torch.argmax(preds, 1)
        self.correct += (predict == labels).sum().item()
        self.labeled += labels.numel()

    def get(self):
        return self.correct / max(self.labeled, 1)


class Evaluator(object):
    def __init__(self, args):
        self.args = args
        self.device = torch.device(args.device)
        self.val_data = [(torch.randn(1, 3, 32, 32), torch.randint(0, 21, (1, 32, 32))) for _ in range(3)]
        self.model = get_segmentation_model(model=args.model, dataset=args.dataset, backbone=args.backbone,
                                            aux=args.aux, pretrained=True, pretrained_base=False,
                                            local_rank=args.local_rank, norm_layer=nn.BatchNorm2d).to(self.device)
        self.metric = SegmentationMetric(NUM_CLASS[args.dataset])

    def eval(self):
        self.metric.reset()
        self.model.eval()
        for i, (image, target) in enumerate(self.val_data):
            image = image.to(self.device)
            target = target.to(self.device)
            with torch.no_grad():
                outputs = self.model(image)
            self.metric.update(outputs[0], target)
            print("Sample: {:d}, validation pixAcc: {:.3f}".format(i + 1, self.metric.get() * 100))


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="fcn16s")
    parser.add_argument("--backbone", default="vgg16")
    parser.add_argument("--dataset", default="pascal_voc")
    parser.add_argument("--aux", action="store_true")
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--no-cuda", action="store_true")
    return parser.parse_args([])


if __name__ == "__main__":
    args = parse_args()
    if not args.no_cuda and torch.cuda.is_available():
        args.device = "cuda"
    else:
        args.device = "cpu"
    torch.save(FCN16s(21).state_dict(), get_model_file("fcn16s_vgg16_pascal_voc"))
    evaluator = Evaluator(args)
    evaluator.eval()
