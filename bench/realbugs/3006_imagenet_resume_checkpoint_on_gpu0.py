# source: https://github.com/pytorch/pytorch/issues/23138
# error: no exception: resuming the imagenet example with --resume under multiprocessing DistributedDataParallel
#        (one node, 4 GPUs) leaves an extra ~725 MiB process of every rank on GPU 0 (and, per the fix's commit message,
#        "Attempting to deserialize object on CUDA device 3 but torch.cuda.device_count() is 3" when a checkpoint
#        saved on GPU 3 is resumed or evaluated with --gpu on a machine without that GPU)
# bug: main_worker runs in one process per GPU (args.gpu = gpu, torch.cuda.set_device(args.gpu), the model on that
#      GPU), but resumes with a bare torch.load(args.resume): every storage goes back to the GPU rank 0 saved it from,
#      so each process makes a CUDA context and copies of the checkpoint on GPU 0 (or fails when that GPU does not
#      exist). pytorch/examples commit ee964a2 (PR #629, "Fix load model when a single GPU is used") maps the load to
#      'cuda:{}'.format(args.gpu) when a GPU is given; the line it replaced is marked (DL301). The ImageNet folders
#      and torchvision models are replaced by random batches and a small CNN; the loops are shortened. The example is
#      GPU-only: on a CPU-only machine it stops at its own .cuda() calls.
import argparse
import os
import shutil
import tempfile

import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

best_acc1 = 0


def resnet_tiny(num_classes=10):
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(16, num_classes))


def main(argv):
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
    parser.add_argument("--epochs", default=1, type=int)
    parser.add_argument("--start-epoch", default=0, type=int)
    parser.add_argument("-b", "--batch-size", default=32, type=int)
    parser.add_argument("--lr", default=0.1, type=float)
    parser.add_argument("--resume", default="", type=str)
    parser.add_argument("--world-size", default=-1, type=int)
    parser.add_argument("--rank", default=-1, type=int)
    parser.add_argument("--dist-url", default="tcp://127.0.0.1:23456", type=str)
    parser.add_argument("--dist-backend", default="nccl", type=str)
    parser.add_argument("--gpu", default=None, type=int)
    parser.add_argument("--multiprocessing-distributed", action="store_true")
    parser.add_argument("--save-dir", default=tempfile.mkdtemp(), type=str)
    args = parser.parse_args(argv)

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    global best_acc1
    args.gpu = gpu
    if args.distributed:
        if args.multiprocessing_distributed:
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    model = resnet_tiny()

    if args.distributed:
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
            args.batch_size = int(args.batch_size / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        else:
            model.cuda()
            model = torch.nn.parallel.DistributedDataParallel(model)
    elif args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    else:
        model = torch.nn.DataParallel(model).cuda()

    criterion = nn.CrossEntropyLoss().cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    if args.resume:
        if os.path.isfile(args.resume):
            print("=> loading checkpoint '{}'".format(args.resume))
            checkpoint = torch.load(args.resume)  # expect: DL301
            args.start_epoch = checkpoint["epoch"]
            best_acc1 = checkpoint["best_acc1"]
            if args.gpu is not None:
                best_acc1 = best_acc1.to(args.gpu)
            model.load_state_dict(checkpoint["state_dict"])
            optimizer.load_state_dict(checkpoint["optimizer"])
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))

    cudnn.benchmark = True
    train_loader = [(torch.randn(args.batch_size, 3, 32, 32), torch.randint(0, 10, (args.batch_size,))) for _ in range(4)]
    for epoch in range(args.start_epoch, args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, args)
        acc1 = validate(train_loader, model, criterion, args)
        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
            save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best_acc1,
                             "optimizer": optimizer.state_dict()}, is_best, args.save_dir)


def train(train_loader, model, criterion, optimizer, epoch, args):
    model.train()
    for i, (images, target) in enumerate(train_loader):
        if args.gpu is not None:
            images = images.cuda(args.gpu, non_blocking=True)
        target = target.cuda(args.gpu, non_blocking=True)
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(val_loader, model, criterion, args):
    model.eval()
    correct, total = torch.zeros((), device="cuda" if args.gpu is None else args.gpu), 0
    with torch.no_grad():
        for images, target in val_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
            target = target.cuda(args.gpu, non_blocking=True)
            correct += (model(images).argmax(1) == target).sum()
            total += target.numel()
    return correct * 100.0 / total


def save_checkpoint(state, is_best, save_dir, filename="checkpoint.pth.tar"):
    path = os.path.join(save_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(save_dir, "model_best.pth.tar"))


if __name__ == "__main__":
    save_dir = tempfile.mkdtemp()
    main(["--multiprocessing-distributed", "--world-size", "1", "--rank", "0", "--epochs", "1", "--save-dir", save_dir])
    main(["--multiprocessing-distributed", "--world-size", "1", "--rank", "0", "--epochs", "2", "--save-dir", save_dir,
          "--resume", os.path.join(save_dir, "checkpoint.pth.tar")])
