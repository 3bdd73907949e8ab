# source: https://github.com/dmlc/dgl/pull/3607
# error: RuntimeError: Tensors must be CUDA and dense (dist.all_reduce of the node count in pad_data, --backend nccl)
# bug: the distributed GraphSAGE example pads every worker's training node ids to the largest count among workers:
#      pad_data wraps the local count in th.tensor(...) on the host and all-reduces it with MAX. That works under
#      gloo, but once the PR added the nccl backend option the collective gets a CPU tensor. The merged fix moves the
#      count to the training device before the all_reduce (DL316: a host tensor in an NCCL collective).
import argparse
import os
import tempfile

import torch as th
import torch.distributed as dist
import torch.nn as nn


def pad_data(nids, device):
    num_nodes = th.tensor(nids.numel())
    dist.all_reduce(num_nodes, dist.ReduceOp.MAX)  # expect: DL316
    max_num_nodes = int(num_nodes)
    nids_length = nids.shape[0]
    if max_num_nodes > nids_length:
        repeat_size, pad_size = divmod(max_num_nodes, nids_length)
        new_nids = th.cat([nids] * repeat_size + [nids[:pad_size]], dim=0)
    else:
        new_nids = nids
    assert new_nids.shape[0] == max_num_nodes
    return new_nids


class SAGE(nn.Module):
    def __init__(self, in_feats, n_hidden, n_classes):
        super().__init__()
        self.lin1 = nn.Linear(in_feats, n_hidden)
        self.lin2 = nn.Linear(n_hidden, n_classes)

    def forward(self, x):
        return self.lin2(th.relu(self.lin1(x)))


def run(args, device, features, labels, train_nid):
    train_nid = pad_data(train_nid, device)
    model = SAGE(features.shape[1], 16, 3).to(device)
    opt = th.optim.Adam(model.parameters(), lr=0.01)
    for start in range(0, train_nid.numel(), args.batch_size):
        seeds = train_nid[start:start + args.batch_size]
        logits = model(features[seeds].to(device))
        loss = nn.functional.cross_entropy(logits, labels[seeds].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def main(args):
    dist.init_process_group(backend=args.backend, init_method="file://" + args.init_file, rank=0, world_size=1)
    if args.backend == "nccl":
        device = th.device("cuda:" + str(args.local_rank))
        th.cuda.set_device(device)
    else:
        device = th.device("cpu")
    features, labels = th.randn(50, 8), th.randint(0, 3, (50,))
    train_nid = th.arange(0, 50, 3)
    print(run(args, device, features, labels, train_nid))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", type=str, default="nccl" if th.cuda.is_available() else "gloo", choices=["gloo", "nccl"])
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--init_file", type=str, default=os.path.join(tempfile.mkdtemp(), "pg_init"))
    main(parser.parse_args([]))
