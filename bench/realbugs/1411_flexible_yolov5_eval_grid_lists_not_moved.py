# source: https://github.com/Bobo-y/flexible-yolov5/issues/111
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the YOLO head keeps its inference grids in plain Python lists (self.grid, self.anchor_grid)
#      and rebuilds a grid only when the feature-map shape changes. A checkpoint saved after
#      inference carries the grids; eval.py loads it onto the CPU and moves the model with
#      .to(device), which moves parameters and buffers but not the lists, so with the same image
#      size the head adds CPU grids to CUDA predictions. The reporter's workaround (issue closed;
#      the maintainer could not reproduce) moves every grid after the load; it is inserted after the
#      marked line, whose move leaves the grids behind (DL103: tensors in a plain attribute of an
#      nn.Module are not moved with it).
import io

import torch
import torch.nn as nn


class YOLOHead(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16), stride=(8.0, 16.0)):
        super().__init__()
        self.no, self.nl, self.na = nc + 5, len(anchors), len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        self.anchor_grid = [torch.zeros(1)] * self.nl
        self.register_buffer("anchors", torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)
        self.stride = torch.tensor(stride)
        self.anchors /= self.stride.view(-1, 1, 1)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2 + self.grid[i]) * self.stride[i]
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                z.append(y.view(bs, -1, self.no))
        return x if self.training else torch.cat(z, 1)

    def _make_grid(self, nx, ny, i):
        d, t = self.anchors[i].device, self.anchors[i].dtype
        shape = 1, self.na, ny, nx, 2
        yv, xv = torch.meshgrid(torch.arange(ny, device=d, dtype=t), torch.arange(nx, device=d, dtype=t), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(shape) - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, stride=8, padding=1), nn.Conv2d(8, 16, 3, stride=2, padding=1)])
        self.detection = YOLOHead()

    def forward(self, img):
        p3 = self.backbone[0](img)
        p4 = self.backbone[1](p3)
        return self.detection([p3, p4])


def attempt_load(buffer):
    ckpt = torch.load(buffer, map_location="cpu", weights_only=False)
    return ckpt["model"].float().eval()


def save_after_validation(model, imgsz, device):
    model.to(device).eval()
    with torch.no_grad():
        model(torch.zeros(1, 3, imgsz, imgsz, device=device))
    buffer = io.BytesIO()
    torch.save({"model": model}, buffer)
    buffer.seek(0)
    return buffer


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    weights = save_after_validation(Detector(), 64, device)
    model = attempt_load(weights).to(device)  # expect: DL103
    with torch.no_grad():
        print(model(torch.rand(2, 3, 64, 64, device=device)).shape)
