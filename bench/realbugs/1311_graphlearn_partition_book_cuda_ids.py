# source: https://github.com/alibaba/graphlearn-for-pytorch/pull/10
# error: RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)
# bug: distributed sampling runs on the sampler's device (a GPU), so the seed and sampled node ids
#      are CUDA tensors, while the partition books (node id -> partition) and the node labels are
#      kept on the CPU; the graph's partition lookup, the feature store's local/remote split and the
#      sampler's label collection index those CPU tensors with the CUDA ids. The fix (commit
#      e3df239, issue 9) moves the ids to the indexed tensor's device at each lookup; the three
#      lines of the homogeneous path are marked (DL207). The RPC layer and the fix's change to the
#      CPU feature store (feature.py) are left out: the local features here live on the device.
import torch


class DistGraph:
    def __init__(self, num_partitions, partition_idx, node_pb, local_rows, local_cols):
        self.num_partitions = num_partitions
        self.partition_idx = partition_idx
        self.node_pb = node_pb
        self.rows, self.cols = local_rows, local_cols

    def get_node_partitions(self, ids):
        return self.node_pb[ids]  # expect: DL207


class DistFeature:
    def __init__(self, partition_idx, local_feature, feature_pb, device):
        self.partition_idx = partition_idx
        self.local_feature = local_feature
        self.feature_pb = feature_pb
        self.device = device

    def _local_selecting_get(self, ids):
        feat, pb = self.local_feature, self.feature_pb
        ids = ids.to(self.device)
        input_order = torch.arange(ids.size(0), dtype=torch.long, device=self.device)
        partition_ids = pb[ids].to(self.device)  # expect: DL207
        local_mask = partition_ids == self.partition_idx
        local_ids = torch.masked_select(ids, local_mask)
        local_index = torch.masked_select(input_order, local_mask)
        return feat[local_ids], local_index


class DistNeighborSampler:
    def __init__(self, dist_graph, dist_node_feature, node_labels, num_neighbors, device):
        self.dist_graph = dist_graph
        self.dist_node_feature = dist_node_feature
        self.node_labels = node_labels
        self.num_neighbors = num_neighbors
        self.device = device

    def _sample_one_hop(self, srcs, req_num):
        partition_ids = self.dist_graph.get_node_partitions(srcs)
        local = srcs[partition_ids.to(self.device) == self.dist_graph.partition_idx]
        rows, cols = self.dist_graph.rows.to(self.device), self.dist_graph.cols.to(self.device)
        nbrs = [cols[rows == s][:req_num] for s in local]
        return torch.cat(nbrs) if nbrs else srcs.new_empty(0)

    def sample_from_nodes(self, seeds):
        input_seeds = seeds.to(self.device)
        nodes = [input_seeds]
        src = input_seeds
        for req_num in self.num_neighbors:
            src = self._sample_one_hop(src, req_num)
            nodes.append(src)
        output_node = torch.unique(torch.cat(nodes))
        return self._collate_fn(output_node, batch_size=input_seeds.numel())

    def _collate_fn(self, output_node, batch_size):
        result_map = {"ids": output_node, "batch_size": batch_size}
        if self.node_labels is not None:
            result_map["nlabels"] = self.node_labels[output_node]  # expect: DL207
        if self.dist_node_feature is not None:
            result_map["nfeats"], result_map["nfeat_index"] = self.dist_node_feature._local_selecting_get(output_node)
        return result_map


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    num_nodes = 12
    node_pb = torch.arange(num_nodes) % 2  # partition book, on the CPU
    rows = torch.arange(num_nodes).repeat_interleave(2)
    cols = (rows * 5 + torch.arange(num_nodes * 2)) % num_nodes
    graph = DistGraph(2, 0, node_pb, rows, cols)
    feature = DistFeature(0, torch.randn(num_nodes, 4, device=device), node_pb, device)
    labels = torch.randint(0, 3, (num_nodes,))
    sampler = DistNeighborSampler(graph, feature, labels, num_neighbors=[2, 2], device=device)
    out = sampler.sample_from_nodes(torch.tensor([0, 2, 4]))
    print(out["ids"].tolist(), out["nlabels"].tolist(), out["nfeats"].shape)
