# source: https://github.com/pyg-team/pytorch_geometric/issues/3709
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument tensors in method wrapper___cat)
# bug: a link-split transform applied to a graph already on the GPU (a ToDevice transform runs
#      first) samples negative edges on the host (the sampler of that PyG version drew them with
#      numpy and returned a CPU tensor, the cause named in the sibling report pyg-team/
#      pytorch_geometric#3641) and concatenates them with the CUDA positive edges. No fix is
#      named in the thread; the line the traceback points to is marked.
import numpy as np
import torch


def negative_sampling(edge_index, num_nodes, num_neg_samples):
    existing = set((edge_index[0] * num_nodes + edge_index[1]).tolist())
    candidates = np.random.choice(num_nodes * num_nodes, num_neg_samples * 3, replace=False)
    picked = [c for c in candidates if c not in existing][:num_neg_samples]
    picked = torch.from_numpy(np.array(picked, dtype=np.int64))
    return torch.stack([picked // num_nodes, picked % num_nodes], dim=0)


def create_label(edge_index, num_nodes):
    neg_edge_index = negative_sampling(edge_index, num_nodes, edge_index.size(1))
    edge_label = torch.cat([torch.ones(edge_index.size(1)), torch.zeros(neg_edge_index.size(1))])
    edge_index = torch.cat([edge_index, neg_edge_index], dim=-1)  # expect: DL201
    return edge_index, edge_label


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    num_nodes = 50
    edge_index = torch.randint(0, num_nodes, (2, 40)).to(device)
    print(create_label(edge_index, num_nodes)[0].shape)
