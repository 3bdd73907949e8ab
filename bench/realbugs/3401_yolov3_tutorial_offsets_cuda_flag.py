# source: https://github.com/ayooshkathuria/YOLO_v3_tutorial_from_scratch/pull/30
# error: RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #4
#        'other' (the PR's description; its remedy "added: prediction = prediction.cuda()" in util.py)
# bug: Darknet.forward hands its CUDA argument to util.predict_transform, which builds the grid offsets and the
#      anchors on the host (from np.meshgrid / a list) and moves them with a bare .cuda() whenever the flag is true,
#      whatever device the prediction itself is on; with the network and its input left on the CPU and the flag true
#      (CUDA available), prediction[:,:,:2] += x_y_offset meets a CPU prediction with CUDA offsets. The PR (open, not
#      merged) moves the prediction to the GPU instead; with no merged fix the line the error points to (the in-place
#      add of the offsets) is marked (DL201); the .cuda() lines are the DL302 candidates. Reductions: the cfg parser
#      and create_modules are replaced by a two-block network (one conv, one yolo layer) built in the same
#      Darknet/DetectionLayer shape; write_results, NMS and the weight loader are dropped. The driver follows issue
#      #26's traceback (darknet.py line 239: pred = model(inp, torch.cuda.is_available())), the call the maintainer
#      gives in issue #7: the network and its input left on the CPU and forward called with CUDA =
#      torch.cuda.is_available(); get_test_input's image read is random data, still through torch.from_numpy. Needs NumPy, as upstream.
from __future__ import division

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


# --- util.py ---
def predict_transform(prediction, inp_dim, anchors, num_classes, CUDA=True):
    batch_size = prediction.size(0)
    stride = inp_dim // prediction.size(2)
    grid_size = inp_dim // stride
    bbox_attrs = 5 + num_classes
    num_anchors = len(anchors)

    prediction = prediction.view(batch_size, bbox_attrs * num_anchors, grid_size * grid_size)
    prediction = prediction.transpose(1, 2).contiguous()
    prediction = prediction.view(batch_size, grid_size * grid_size * num_anchors, bbox_attrs)
    anchors = [(a[0] / stride, a[1] / stride) for a in anchors]

    prediction[:, :, 0] = torch.sigmoid(prediction[:, :, 0])
    prediction[:, :, 1] = torch.sigmoid(prediction[:, :, 1])
    prediction[:, :, 4] = torch.sigmoid(prediction[:, :, 4])

    grid = np.arange(grid_size)
    a, b = np.meshgrid(grid, grid)

    x_offset = torch.FloatTensor(a).view(-1, 1)
    y_offset = torch.FloatTensor(b).view(-1, 1)

    if CUDA:
        x_offset = x_offset.cuda()
        y_offset = y_offset.cuda()

    x_y_offset = torch.cat((x_offset, y_offset), 1).repeat(1, num_anchors).view(-1, 2).unsqueeze(0)

    prediction[:, :, :2] += x_y_offset  # expect: DL201

    anchors = torch.FloatTensor(anchors)

    if CUDA:
        anchors = anchors.cuda()

    anchors = anchors.repeat(grid_size * grid_size, 1).unsqueeze(0)
    prediction[:, :, 2:4] = torch.exp(prediction[:, :, 2:4]) * anchors

    prediction[:, :, 5: 5 + num_classes] = torch.sigmoid((prediction[:, :, 5: 5 + num_classes]))

    prediction[:, :, :4] *= stride

    return prediction


# --- darknet.py ---
def get_test_input():
    img_ = np.random.rand(1, 3, 64, 64)
    img_ = torch.from_numpy(img_).float()
    img_ = Variable(img_)
    return img_


class DetectionLayer(nn.Module):
    def __init__(self, anchors):
        super(DetectionLayer, self).__init__()
        self.anchors = anchors


class Darknet(nn.Module):
    def __init__(self, num_classes=2):
        super(Darknet, self).__init__()
        anchors = [(10, 13), (16, 30), (33, 23)]
        self.blocks = [{"type": "net", "height": "64"},
                       {"type": "convolutional"},
                       {"type": "yolo", "classes": str(num_classes)}]
        self.net_info = self.blocks[0]
        conv = nn.Sequential(nn.Conv2d(3, len(anchors) * (5 + num_classes), 3, 2, 1))
        detection = nn.Sequential(DetectionLayer(anchors))
        self.module_list = nn.ModuleList([conv, detection])

    def forward(self, x, CUDA):
        modules = self.blocks[1:]
        outputs = {}
        write = 0
        for i, module in enumerate(modules):
            module_type = (module["type"])
            if module_type == "convolutional":
                x = self.module_list[i](x)
            elif module_type == 'yolo':
                anchors = self.module_list[i][0].anchors
                inp_dim = int(self.net_info["height"])
                num_classes = int(module["classes"])
                x = x.data
                x = predict_transform(x, inp_dim, anchors, num_classes, CUDA)
                if not write:
                    detections = x
                    write = 1
                else:
                    detections = torch.cat((detections, x), 1)
            outputs[i] = x
        return detections


if __name__ == "__main__":
    model = Darknet()
    inp = get_test_input()
    pred = model(inp, torch.cuda.is_available())
    print(pred.shape)
