# source: https://github.com/skyhehe123/SA-SSD/issues/17
# fixed twin: commit fca4da0 ("multi-class training") moves the detector to the GPU before wrapping it:
#             MMDistributedDataParallel(model.cuda()).
from __future__ import division

import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DataParallel, DistributedDataParallel


# --- mmcv/parallel/data_parallel.py, mmcv/parallel/distributed.py ---
class MMDataParallel(DataParallel):
    pass


class MMDistributedDataParallel(DistributedDataParallel):
    def scatter(self, inputs, kwargs, device_ids):
        return [inputs], [kwargs]


# --- tools/env.py ---
def init_dist(launcher, backend='nccl', **kwargs):
    if mp.get_start_method(allow_none=True) is None:
        mp.set_start_method('spawn')
    if launcher == 'pytorch':
        _init_dist_pytorch(backend, **kwargs)
    else:
        raise ValueError('Invalid launcher type: {}'.format(launcher))


def _init_dist_pytorch(backend, **kwargs):
    rank = int(os.environ['RANK'])
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % num_gpus)
    dist.init_process_group(backend=backend, **kwargs)


def set_random_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


# --- mmdet/models (build_detector) ---
class SingleStageDetector(nn.Module):
    def __init__(self, model, train_cfg=None, test_cfg=None):
        super(SingleStageDetector, self).__init__()
        self.backbone = nn.Conv2d(model['in_channels'], 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.head = nn.Conv2d(16, model['num_classes'], 1)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.backbone(x))))


def build_detector(cfg, train_cfg=None, test_cfg=None):
    return SingleStageDetector(cfg, train_cfg=train_cfg, test_cfg=test_cfg)


# --- tools/train.py ---
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Train a detector')
    parser.add_argument('--gpus', type=int, default=1)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none')
    parser.add_argument('--local_rank', type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = dict(model=dict(in_channels=4, num_classes=2), train_cfg=None, test_cfg=None,
               dist_params=dict(backend='nccl'), gpus=args.gpus)

    if args.launcher == 'none':
        distributed = False
    else:
        distributed = True
        init_dist(args.launcher, **cfg['dist_params'])

    if args.seed is not None:
        set_random_seed(args.seed)

    model = build_detector(cfg['model'], train_cfg=cfg['train_cfg'], test_cfg=cfg['test_cfg'])

    if distributed:
        model = MMDistributedDataParallel(model.cuda())
    else:
        model = MMDataParallel(model, device_ids=range(cfg['gpus'])).cuda()
    return model


if __name__ == '__main__':
    os.environ.setdefault('RANK', '0')
    os.environ.setdefault('WORLD_SIZE', '1')
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29511')
    print(main(['--launcher', 'pytorch']))
