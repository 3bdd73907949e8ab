# source: https://github.com/ultralytics/yolov5/pull/1455
# error: CUDA device bug with PyTorch Hub autoshape models when building Detections() outputs
# bug: the results container builds its per-image normalization gains with torch.Tensor(...) on the
#      CPU and divides the CUDA box predictions by them.
import torch


def xyxy2xywh(x):
    y = x.clone()
    y[:, 0] = (x[:, 0] + x[:, 2]) / 2
    y[:, 1] = (x[:, 1] + x[:, 3]) / 2
    y[:, 2] = x[:, 2] - x[:, 0]
    y[:, 3] = x[:, 3] - x[:, 1]
    return y


class Detections:
    # detections class for YOLOv5 inference results
    def __init__(self, imgs, pred, names=None):
        super(Detections, self).__init__()
        self.imgs = imgs  # list of images as numpy arrays
        self.pred = pred  # list of tensors pred[0] = (xyxy, conf, cls)
        self.names = names
        self.xyxy = pred
        self.xywh = [xyxy2xywh(x) for x in pred]
        gn = [torch.Tensor([*[im.shape[i] for i in [1, 0, 1, 0]], 1., 1.]) for im in imgs]  # expect: DL202
        self.xyxyn = [x / g for x, g in zip(self.xyxy, gn)]
        self.xywhn = [x / g for x, g in zip(self.xywh, gn)]
        self.n = len(self.pred)

    def print(self):
        for i, (img, pred) in enumerate(zip(self.imgs, self.pred)):
            s = f'Image {i + 1}/{len(self.pred)}: {img.shape[0]}x{img.shape[1]} '
            for c in pred[:, -1].unique():
                n = (pred[:, -1] == c).sum()
                s += f'{n} {self.names[int(c)]}s, '
            print(s)


class autoShape(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model.eval()

    @torch.no_grad()
    def forward(self, imgs, x):
        p = next(self.model.parameters())
        y = self.model(x.to(p.device).type_as(p))[0]
        return Detections(imgs, list(y), self.model.names)
