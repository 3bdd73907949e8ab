# source: https://github.com/pytorch/pytorch/issues/46821
# fixed twin: as the maintainer answered, the model is moved to its GPU (model.cuda(args.gpu), the line the
#             reporter had commented out) before DistributedDataParallel wraps it with device_ids=[args.gpu].
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class Args:
    def __init__(self):
        self.gpu = None
        self.batch_size = 16
        self.workers = 2
        self.lr = 0.1
        self.world_size = 1
        self.rank = 0
        self.dist_backend = "nccl" if torch.cuda.is_available() else "gloo"
        self.distributed = True


def build_model(num_classes=10):
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, num_classes))


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    args.rank = args.rank * ngpus_per_node + (gpu or 0)
    dist.init_process_group(backend=args.dist_backend, init_method="env://",
                            world_size=args.world_size * ngpus_per_node, rank=args.rank)
    model = build_model()
    if args.gpu is not None:
        print("Gpu setting...", args.gpu)
        torch.cuda.set_device(args.gpu)
        model.cuda(args.gpu)
        args.batch_size = int(args.batch_size / ngpus_per_node)
        args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
        criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    else:
        model = torch.nn.parallel.DistributedDataParallel(model)
        criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    for step in range(3):
        images, target = torch.randn(args.batch_size, 3, 16, 16), torch.randint(0, 10, (args.batch_size,))
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
            target = target.cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(args.rank, step, loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    args = Args()
    ngpus_per_node = torch.cuda.device_count()
    if ngpus_per_node > 0:
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(None, 1, args)
