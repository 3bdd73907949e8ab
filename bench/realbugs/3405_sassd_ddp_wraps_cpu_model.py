# source: https://github.com/skyhehe123/SA-SSD/issues/17
# error: (./dist_train.sh) at train.py line 81, model = MMDistributedDataParallel(model).cuda() ->
#        distributed.py __init__ -> dist._broadcast_coalesced(...) -> RuntimeError: Tensors must be CUDA and dense
# bug: tools/train.py builds the detector on the CPU and, in distributed mode, wraps it in MMDistributedDataParallel
#      before moving it: DistributedDataParallel's constructor broadcasts the module's parameters and buffers from rank
#      0 over the NCCL process group, which only takes CUDA tensors; the .cuda() applied to the wrapper comes too late.
#      The fix (commit fca4da0, "multi-class training") wraps model.cuda() instead; the changed line is marked (DL205,
#      the closest rule: a data-parallel wrapper given a module that was not moved to its GPU). Reductions:
#      build_detector is a small detector module, the config file is a dict, the dataset, optimizer, scheduler and the
#      training loop after the wrap are dropped; init_dist / _init_dist_pytorch follow tools/env.py; mmcv's
#      MMDistributedDataParallel is a DistributedDataParallel subclass whose scatter keeps the inputs as given. The
#      driver is one rank of dist_train.sh (RANK, WORLD_SIZE, MASTER_ADDR/PORT set for a single process). Needs CUDA
#      and NCCL, as upstream (on a CPU-only machine it stops in _init_dist_pytorch at rank % num_gpus with no GPU
#      counted); needs NumPy, as upstream.
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
        model = MMDistributedDataParallel(model).cuda()  # expect: DL205
    else:
        model = MMDataParallel(model, device_ids=range(cfg['gpus'])).cuda()
    return model


if __name__ == '__main__':
    os.environ.setdefault('RANK', '0')
    os.environ.setdefault('WORLD_SIZE', '1')
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29511')
    print(main(['--launcher', 'pytorch']))
