# source: https://github.com/pytorch/examples/pull/515
# error: lines 245-246 (acc1 > best_acc1, max) "will always FAIL" after resuming on a different GPU: the two tensors are on two GPUs (the PR does not quote the message)
# bug: the ImageNet example saves best_acc1, a tensor on the GPU the run used, in its checkpoint.
#      Resuming with --gpu on another GPU, torch.load(args.resume) (no map_location) restores
#      best_acc1 onto the GPU it was saved from, while validate() returns acc1 on args.gpu; the
#      comparison acc1 > best_acc1 after the first epoch mixes the two GPUs. The merged fix only
#      inserts best_acc1 = best_acc1.to(args.gpu) after reading it from the checkpoint; the marker
#      is on the comparison the traceback points to (DL201: operands on different devices; the
#      cause is the load without map_location, DL301's shape, at torch.load).
import argparse
import os
import shutil
import tempfile

import torch
import torch.nn as nn


def accuracy(output, target):
    pred = output.argmax(dim=1)
    return pred.eq(target).float().sum(0, keepdim=True) * (100.0 / target.size(0))


def validate(val_loader, model, args):
    model.eval()
    top1 = []
    with torch.no_grad():
        for images, target in val_loader:
            if args.gpu is not None:
                images = images.cuda(args.gpu, non_blocking=True)
                target = target.cuda(args.gpu, non_blocking=True)
            top1.append(accuracy(model(images), target))
    return torch.stack(top1).mean()


def save_checkpoint(state, is_best, filename):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, filename + ".best")


def main_worker(args):
    best_acc1 = 0
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10))
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    optimizer = torch.optim.SGD(model.parameters(), 0.1)

    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume)
        args.start_epoch = checkpoint["epoch"]
        best_acc1 = checkpoint["best_acc1"]
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])

    val_loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(3)]
    for epoch in range(args.start_epoch, args.epochs):
        acc1 = validate(val_loader, model, args)
        is_best = acc1 > best_acc1  # expect: DL201
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best_acc1,
                         "optimizer": optimizer.state_dict()}, is_best, args.checkpoint)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=None)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--start-epoch", type=int, default=0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--checkpoint", default=os.path.join(tempfile.mkdtemp(), "checkpoint.pth.tar"))
    first = parser.parse_args([])
    if torch.cuda.is_available():
        first.gpu = 0
    main_worker(first)
    resumed = parser.parse_args(["--resume", first.checkpoint, "--epochs", "4",
                                 "--checkpoint", first.checkpoint])
    if torch.cuda.device_count() > 1:
        resumed.gpu = 1
    main_worker(resumed)
    print("resumed to epoch", resumed.epochs)
