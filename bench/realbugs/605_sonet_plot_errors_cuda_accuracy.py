# source: https://github.com/lijx10/SO-Net/issues/41
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (from np.array(self.plot_data['Y']) in plot_current_errors)
# bug: the part-segmentation model reports its training errors as a dict of Python floats taken
#      with .item(), except the training accuracy, which stays a 0-dim CUDA tensor (torch.mean of a
#      mask computed on the GPU); the visualizer appends the values to its history and converts the
#      history with np.array, which cannot read a CUDA tensor. No upstream fix is public; the missing
#      .item() on the accuracy is where the thread's traceback leads (marked there).
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn


class Segmenter:
    def __init__(self, device):
        self.device = device
        self.net = nn.Conv1d(3, 5, 1).to(device)
        self.loss_fn = nn.CrossEntropyLoss().to(device)
        self.test_loss = torch.zeros(1, device=device)

    def optimize(self, points, seg):
        self.points, self.seg = points.to(self.device), seg.to(self.device)
        self.score = self.net(self.points)
        self.loss = self.loss_fn(self.score, self.seg)
        self.loss.backward()

    def get_current_errors(self):
        _, predicted_seg = torch.max(self.score.data, dim=1, keepdim=False)
        correct_mask = torch.eq(predicted_seg, self.seg).float()
        train_accuracy = torch.mean(correct_mask)
        return OrderedDict([
            ("train_loss_seg", self.loss.item()),
            ("train_accuracy_seg", train_accuracy),  # expect: DL204
            ("test_loss_seg", self.test_loss.item()),
        ])


class Visualizer:
    def plot_current_errors(self, epoch, counter_ratio, errors):
        if not hasattr(self, "plot_data"):
            self.plot_data = {"X": [], "Y": [], "legend": list(errors.keys())}
        self.plot_data["X"].append(epoch + counter_ratio)
        self.plot_data["Y"].append([errors[k] for k in self.plot_data["legend"]])
        return np.array(self.plot_data["Y"])


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model, visualizer = Segmenter(device), Visualizer()
    for i in range(3):
        model.optimize(torch.randn(4, 3, 32), torch.randint(0, 5, (4, 32)))
        print(visualizer.plot_current_errors(0, i / 3, model.get_current_errors()).shape)
