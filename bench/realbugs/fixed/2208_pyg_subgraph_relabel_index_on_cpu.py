# source: https://github.com/pyg-team/pytorch_geometric/pull/845
# fixed twin: the relabelling table and the arange written into it are made on edge_index's device, as PyG's subgraph does after the PR.
import torch
import torch.nn as nn


def maybe_num_nodes(edge_index, num_nodes=None):
    return int(edge_index.max()) + 1 if num_nodes is None else num_nodes


def subgraph(subset, edge_index, edge_attr=None, relabel_nodes=False, num_nodes=None):
    device = edge_index.device
    if isinstance(subset, (list, tuple)):
        subset = torch.tensor(subset, dtype=torch.long)

    if subset.dtype == torch.bool:
        n_mask = subset
        if relabel_nodes:
            n_idx = torch.zeros(n_mask.size(0), dtype=torch.long, device=device)
            n_idx[subset] = torch.arange(int(subset.sum()), device=device)
    else:
        num_nodes = maybe_num_nodes(edge_index, num_nodes)
        n_mask = torch.zeros(num_nodes, dtype=torch.bool)
        n_mask[subset] = 1
        if relabel_nodes:
            n_idx = torch.zeros(num_nodes, dtype=torch.long, device=device)
            n_idx[subset] = torch.arange(subset.size(0), device=device)

    mask = n_mask[edge_index[0].cpu()] & n_mask[edge_index[1].cpu()]
    edge_index = edge_index[:, mask.to(edge_index.device)]
    edge_attr = edge_attr[mask] if edge_attr is not None else None

    if relabel_nodes:
        edge_index = n_idx[edge_index]

    return edge_index, edge_attr


class MeanAggr(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.lin = nn.Linear(channels, channels)

    def forward(self, x, edge_index):
        out = torch.zeros_like(x).index_add_(0, edge_index[1], x[edge_index[0]])
        return self.lin(out)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    conv = MeanAggr(8).to(device)
    x = torch.randn(20, 8).to(device)
    edge_index = torch.randint(0, 20, (2, 60)).to(device)
    keep = [0, 2, 3, 5, 7, 11, 13]
    sub_edge_index, _ = subgraph(keep, edge_index, relabel_nodes=True, num_nodes=20)
    print(conv(x[torch.tensor(keep, device=device)], sub_edge_index).shape)
