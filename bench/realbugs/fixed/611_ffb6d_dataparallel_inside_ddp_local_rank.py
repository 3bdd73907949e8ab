# source: https://github.com/ethnhe/FFB6D/issues/4
# error: RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cuda:2
# bug: the distributed training script moves each process's model to cuda:<local_rank>, then wraps it
#      in nn.DataParallel (device_ids default to every visible GPU, so device_ids[0] is cuda:0) before
#      the DistributedDataParallel wrapper; every process but rank 0 fails at the first forward. The
#      fix (FFB6D commit b2495c1, "Fix nn.DataParallel bug") drops the DataParallel wrap. Run it with
#      torchrun --nproc_per_node=2 on a machine with two GPUs.
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
parser.add_argument("--steps", type=int, default=2)


class PoseNet(nn.Module):
    def __init__(self, n_kps=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.kp_head = nn.Conv2d(16, n_kps * 3, 1)

    def forward(self, rgb):
        return self.kp_head(self.backbone(rgb))


def train():
    args = parser.parse_args()
    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo", init_method="env://")
    if torch.cuda.is_available():
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda:{}".format(args.local_rank))
    else:
        device = torch.device("cpu")
    model = PoseNet()
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model = nn.parallel.DistributedDataParallel(
        model, device_ids=[args.local_rank] if device.type == "cuda" else None,
        output_device=args.local_rank if device.type == "cuda" else None)
    for _ in range(args.steps):
        rgb = torch.randn(2, 3, 32, 32, device=device)
        loss = model(rgb).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("rank", dist.get_rank(), "loss", loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
