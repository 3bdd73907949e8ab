# source: https://github.com/KaiyangZhou/deep-person-reid/issues/267
# fixed twin: commit b39e89a exports CUDA_VISIBLE_DEVICES right after parse_args, before torch.cuda.is_available()
#             (and drops the cfg.use_gpu condition on it).
import os
import sys
import time
import random
import argparse
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn


# --- torchreid/utils/tools.py ---
def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# --- torchreid/engine/engine.py, torchreid/engine/image/softmax.py (reduced) ---
class Engine(object):
    def __init__(self, model, optimizer=None, use_gpu=True):
        self.model = model
        self.optimizer = optimizer
        self.use_gpu = (torch.cuda.is_available() and use_gpu)

    def run(self, max_epoch=1):
        for epoch in range(max_epoch):
            self.train(epoch, max_epoch)


class ImageSoftmaxEngine(Engine):
    def __init__(self, model, optimizer, use_gpu=True):
        super(ImageSoftmaxEngine, self).__init__(model, optimizer, use_gpu)

        self.criterion = nn.CrossEntropyLoss()

    def train(self, epoch, max_epoch):
        self.model.train()
        imgs = torch.rand(32, 3, 256, 128)
        pids = torch.randint(0, 751, (32,))
        if self.use_gpu:
            imgs = imgs.cuda()
            pids = pids.cuda()

        self.optimizer.zero_grad()
        outputs = self.model(imgs)
        loss = self.criterion(outputs, pids)
        loss.backward()
        self.optimizer.step()


# --- scripts/default_config.py (stand-in) ---
def get_default_config():
    return SimpleNamespace(
        use_gpu=False,
        data=SimpleNamespace(root='reid-data', sources=['market1501'], targets=['market1501'],
                             transforms=['random_flip'], height=256, width=128),
        train=SimpleNamespace(seed=1, lr=0.0003),
        test=SimpleNamespace(evaluate=False),
        model=SimpleNamespace(name='resnet50'),
    )


# --- scripts/main.py ---
def build_engine(cfg, model, optimizer):
    engine = ImageSoftmaxEngine(
        model,
        optimizer=optimizer,
        use_gpu=cfg.use_gpu
    )
    return engine


def reset_config(cfg, args):
    if args.root:
        cfg.data.root = args.root
    if args.sources:
        cfg.data.sources = args.sources
    if args.targets:
        cfg.data.targets = args.targets
    if args.transforms:
        cfg.data.transforms = args.transforms


def main():
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument('--config-file', type=str, default='', help='path to config file')
    parser.add_argument('-s', '--sources', type=str, nargs='+', help='source datasets (delimited by space)')
    parser.add_argument('-t', '--targets', type=str, nargs='+', help='target datasets (delimited by space)')
    parser.add_argument('--transforms', type=str, nargs='+', help='data augmentation')
    parser.add_argument('--root', type=str, default='', help='path to data root')
    parser.add_argument('--gpu-devices', type=str, default='')
    args = parser.parse_args()

    if args.gpu_devices:
        os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_devices

    cfg = get_default_config()
    cfg.use_gpu = torch.cuda.is_available()
    reset_config(cfg, args)
    set_random_seed(cfg.train.seed)

    log_name = 'test.log' if cfg.test.evaluate else 'train.log'
    log_name += time.strftime('-%Y-%m-%d-%H-%M-%S')

    if cfg.use_gpu:
        torch.backends.cudnn.benchmark = True

    print('Building model: {}'.format(cfg.model.name))
    model = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 751))

    if cfg.use_gpu:
        model = nn.DataParallel(model).cuda()

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.train.lr)

    engine = build_engine(cfg, model, optimizer)
    engine.run()


if __name__ == '__main__':
    main()
