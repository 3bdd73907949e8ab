# source: https://github.com/pytorch/examples/issues/1030
# error: RuntimeError: Tensors must be CUDA and dense
# bug: the ImageNet example's validate() averages its meters over the processes with
#      AverageMeter.all_reduce(), which packs the running sum and count into a new tensor with
#      torch.FloatTensor([...]) - on the CPU - and hands it to dist.all_reduce; the distributed
#      run uses the NCCL backend, which only reduces GPU tensors. The fix (PR 1034, merged; PRs
#      1031/1032 proposed the same) builds the tensor on "cuda" when CUDA is available. The
#      construction line is marked (DL316, a host tensor handed to a collective of an NCCL process
#      group; marked DL201, the closest rule then, until DL316 was added in session 16). One process with world size 1 stands in for the job here; it uses
#      NCCL when a GPU exists, as the example does, and gloo otherwise.
import os
import tempfile

import torch
import torch.distributed as dist
import torch.nn as nn


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.sum = 0.0
        self.count = 0
        self.avg = 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def all_reduce(self):
        total = torch.FloatTensor([self.sum, self.count])  # expect: DL316
        dist.all_reduce(total, dist.ReduceOp.SUM, async_op=False)
        self.sum, self.count = total.tolist()
        self.avg = self.sum / self.count


def validate(loader, model, criterion, device, distributed):
    losses = AverageMeter("Loss")
    top1 = AverageMeter("Acc@1")
    model.eval()
    with torch.no_grad():
        for images, target in loader:
            images, target = images.to(device), target.to(device)
            output = model(images)
            loss = criterion(output, target)
            acc = (output.argmax(1) == target).float().mean() * 100
            losses.update(loss.item(), images.size(0))
            top1.update(acc.item(), images.size(0))
    if distributed:
        top1.all_reduce()
        losses.all_reduce()
    return top1.avg


def main():
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda:0" if use_cuda else "cpu")
    init_file = os.path.join(tempfile.mkdtemp(), "pg")
    dist.init_process_group("nccl" if use_cuda else "gloo", init_method="file://" + init_file,
                            rank=0, world_size=1)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 10)).to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(2)]
    print("acc@1", validate(loader, model, criterion, device, distributed=True))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
