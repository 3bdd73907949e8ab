# source: https://github.com/jfzhang95/pytorch-deeplab-xception/issues/70
# error: RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but device 1 does not equal 0
# bug: the trainer wraps the network in DataParallel with the user's --gpu-ids (here [1]) and then
#      calls model.cuda(), which puts the parameters on the current GPU, cuda:0; DataParallel
#      scatters the batch to device_ids[0] = cuda:1 and the replica there finds its weights on
#      cuda:0. No upstream fix is named in the thread; the line the traceback points to (the
#      forward call) is marked with DL205, the rule for a model not on device_ids[0].
import argparse

import torch
import torch.nn as nn


class Trainer:
    def __init__(self, args):
        self.args = args
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 21, 1))
        self.model = torch.nn.DataParallel(model, device_ids=self.args.gpu_ids)
        self.model = self.model.cuda()
        self.criterion = nn.CrossEntropyLoss()

    def training(self, epoch):
        self.model.train()
        for _ in range(2):
            image = torch.randn(4, 3, 33, 33).cuda()
            target = torch.randint(0, 21, (4, 33, 33)).cuda()
            output = self.model(image)  # expect: DL205
            loss = self.criterion(output, target)
            loss.backward()
        print(epoch, loss.item())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu-ids", type=str, default="1")
    args = parser.parse_args()
    args.gpu_ids = [int(s) for s in args.gpu_ids.split(",")]
    Trainer(args).training(0)
