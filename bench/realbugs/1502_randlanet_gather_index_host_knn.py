# source: https://github.com/aRI0U/RandLA-Net-pytorch/pull/29
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_gather)
# bug: in the 'gather' branch the network keeps the point coordinates on the host and runs the
#      neighbour search there (a CPU-only knn kernel), so the neighbour indices come back on the CPU.
#      The local spatial encoding gathers the host coordinates with them (fine), then expands the
#      same indices to gather the features, which come from the moved layers and live on the GPU.
#      The PR (open; the change stated in its description) moves the expanded indices to the
#      features' device; that line is marked (DL207: gather with an index on another device).
import torch
import torch.nn as nn


def knn(support, query, k):
    # stand-in for the CPU-only neighbour-search kernel: host tensors in, host tensors out
    dist = torch.cdist(query, support)
    d, idx = dist.topk(k, dim=-1, largest=False)
    return idx, d


class SharedMLP(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.conv = nn.Conv2d(d_in, d_out, 1)
        self.bn = nn.BatchNorm2d(d_out)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class LocalSpatialEncoding(nn.Module):
    def __init__(self, d, device):
        super().__init__()
        self.mlp = SharedMLP(10, d)
        self.device = device

    def forward(self, coords, features, knn_output):
        idx, dist = knn_output
        B, N, K = idx.size()
        expanded_idx = idx.unsqueeze(1).expand(B, 3, N, K)
        expanded_coords = coords.transpose(-2, -1).unsqueeze(-1).expand(B, 3, N, K)
        neighbor_coords = torch.gather(expanded_coords, 2, expanded_idx)

        expanded_idx = idx.unsqueeze(1).expand(B, features.size(1), N, K)  # expect: DL207
        expanded_features = features.expand(B, -1, N, K)
        neighbor_features = torch.gather(expanded_features, 2, expanded_idx)

        concat = torch.cat((expanded_coords, neighbor_coords, expanded_coords - neighbor_coords,
                            dist.unsqueeze(-3)), dim=-3).to(self.device)
        return torch.cat((self.mlp(concat), neighbor_features), dim=-3)


class LocalFeatureAggregation(nn.Module):
    def __init__(self, d_in, d_out, num_neighbors, device):
        super().__init__()
        self.num_neighbors = num_neighbors
        self.mlp1 = SharedMLP(d_in, d_out // 2)
        self.lse = LocalSpatialEncoding(d_out // 2, device)
        self.mlp2 = SharedMLP(d_out, d_out)

    def forward(self, coords, features):
        knn_output = knn(coords.cpu().contiguous(), coords.cpu().contiguous(), self.num_neighbors)
        x = self.mlp1(features)
        x = self.lse(coords, x, knn_output)
        return self.mlp2(x.max(dim=-1, keepdim=True).values)


class RandLANet(nn.Module):
    def __init__(self, d_in, num_classes, num_neighbors=4, device=torch.device("cpu")):
        super().__init__()
        self.fc_start = nn.Linear(d_in, 8)
        self.encoder = nn.ModuleList([LocalFeatureAggregation(8, 16, num_neighbors, device),
                                      LocalFeatureAggregation(16, 32, num_neighbors, device)])
        self.head = nn.Conv2d(32, num_classes, 1)
        self.device = device
        self.to(device)

    def forward(self, points):
        coords = points[..., :3].clone().cpu()
        x = self.fc_start(points).transpose(-2, -1).unsqueeze(-1)
        for lfa in self.encoder:
            x = lfa(coords, x)
        return self.head(x).squeeze(-1)


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    cloud = torch.randn(2, 64, 6).to(device)
    model = RandLANet(6, 5, 4, device)
    print(model(cloud).shape)
