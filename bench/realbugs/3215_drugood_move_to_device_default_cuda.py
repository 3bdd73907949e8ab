# source: https://github.com/tencent-ailab/DrugOOD/issues/6
# error: (issue) "Every provided backbone will call the function "move_to_device", moving the data to device "cuda:0".
#        This means the model must be defined on "cuda:0" and "cuda:0" must be included in gpu-ids."
# bug: tools/train.py takes the devices from --device / --gpu-ids, and apis/train_model wraps the model as
#      MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids) (or model.cpu() for --device cpu). mmcv does
#      not scatter the DGL graph batches, so every backbone's forward starts with input = move_to_device(input), and
#      core/utils/misc.move_to_device falls back to torch.device('cuda') - the current device, cuda:0 - when no device
#      is passed, which none of the backbones does. With --gpu-ids 1 the graph lands on cuda:0 while the model sits on
#      cuda:1 (and with --device cpu the move needs CUDA). The issue is open (the maintainers: "we will fix it in a more
#      proper way"); the repository is unchanged, so there is no twin. The hard-coded default the issue names is marked
#      (DL302, the closest: a hard-coded 'cuda' in a program whose devices come from its configuration; the backbone's
#      embedding lookup two calls on is where the devices meet). Reductions: DGL graphs are a small Graph class with
#      ndata/edata dicts and .to(); the GIN backbone is node embeddings, one linear layer and sum pooling; mmcv's
#      MMDataParallel/runner/config are nn.DataParallel, a loop and a namespace; the molecule data set is random graphs.
import argparse
from types import SimpleNamespace

import torch
import torch.nn as nn


# --- drugood/core/utils/misc.py ---
def move_to_device(obj, device=None):
    if (device is None):
        device = torch.device('cuda')  # expect: DL302
    if isinstance(obj, dict):
        return {k: move_to_device(v, device) for k, v in obj.items()}
    elif isinstance(obj, list):
        return [move_to_device(v, device) for v in obj]
    elif isinstance(obj, float) or isinstance(obj, int):
        return obj
    else:
        return obj.to(device)


class Graph:
    """Stand-in for a batched dgl.DGLGraph: node/edge features and .to(device)."""

    def __init__(self, ndata, edata, batch_num_nodes):
        self.ndata, self.edata, self.batch_num_nodes = ndata, edata, batch_num_nodes

    def to(self, device):
        return Graph({k: v.to(device) for k, v in self.ndata.items()},
                     {k: v.to(device) for k, v in self.edata.items()}, self.batch_num_nodes)


# --- drugood/models/backbones/gin.py ---
class GIN(nn.Module):
    def __init__(self, num_node_emb_list=(16,), emb_dim=32):
        super().__init__()
        self.node_embeddings = nn.ModuleList([nn.Embedding(n, emb_dim) for n in num_node_emb_list])
        self.gnn = nn.Linear(emb_dim, emb_dim)

    def forward(self, input):
        input = move_to_device(input)
        categorical_node_feats = [input.ndata["x"]]
        node_embeds = []
        for i, feats in enumerate(categorical_node_feats):
            node_embeds.append(self.node_embeddings[i](feats))
        node_embeds = torch.stack(node_embeds, dim=0).sum(0)
        h = torch.relu(self.gnn(node_embeds))
        return torch.stack([part.sum(0) for part in torch.split(h, input.batch_num_nodes)])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = GIN()
        self.head = nn.Linear(32, 2)

    def forward(self, input, gt_label):
        logits = self.head(self.backbone(input))
        return nn.functional.cross_entropy(logits, gt_label)


# --- drugood/apis/train.py ---
def train_model(model, dataset, cfg, distributed=False, device='cuda'):
    if device == 'cuda':
        model = nn.DataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)
    elif device == 'cpu':
        model = model.cpu()
    else:
        raise ValueError(F'unsupported device name {device}.')
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(cfg.total_epochs):
        for graph, label in dataset:
            loss = model(graph, label).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


def random_graphs(n=4, nodes=5):
    g = torch.Generator().manual_seed(0)
    data = []
    for _ in range(n):
        x = torch.randint(0, 16, (nodes * 2,), generator=g)
        data.append((Graph({"x": x}, {"x": torch.zeros(1)}, [nodes, nodes]), torch.randint(0, 2, (2,), generator=g)))
    return data


def main():
    parser = argparse.ArgumentParser(description='Train a model')
    group_gpus = parser.add_mutually_exclusive_group()
    group_gpus.add_argument('--device', help='device used for training')
    group_gpus.add_argument('--gpus', type=int, help='number of gpus to use')
    group_gpus.add_argument('--gpu-ids', type=int, nargs='+', help='ids of gpus to use')
    args = parser.parse_args()
    cfg = SimpleNamespace(total_epochs=2)
    if args.gpu_ids is not None:
        cfg.gpu_ids = args.gpu_ids
    else:
        cfg.gpu_ids = range(1) if args.gpus is None else range(args.gpus)
    model = Classifier()
    train_model(model, random_graphs(), cfg, distributed=False,
                device='cpu' if args.device == 'cpu' else 'cuda')


if __name__ == '__main__':
    main()
