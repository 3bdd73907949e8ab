# source: https://github.com/LianpoWang/GMPTV/issues/15
# error: (reported from reading the code, no traceback) "get_graph_feature sets device = torch.device('cuda')
#        directly. This leads to device mismatch errors when the input is on CPU or when CUDA is not installed."
# bug: main_gmptv.py picks device = cuda if torch.cuda.is_available() else cpu and moves the model and the point
#      clouds there, but models/backbone.py's get_graph_feature, which the DGCNN backbone calls four times, builds
#      idx_base with a hard-coded device = torch.device('cuda'), so when the script falls back to the CPU the arange
#      fails (no CUDA) or idx + idx_base mixes the CPU kNN indices with a CUDA tensor. The issue is closed, but the
#      code is unchanged at the head (its only later commit touches matching.py's whitespace): no twin. The marker is
#      on the hard-coded device line the issue names (DL302, the closest rule: a CUDA device hard-coded in a helper
#      that otherwise follows its input, as 3015 marks it). The issue also names B_N_xyz2pxo's torch.cuda.IntTensor
#      in models/gmptv.py; that function is defined but called nowhere in the repository, so it is left out.
#      Reductions: GMPTV keeps the DGCNN backbone path with no transformer layers, the global matching and the
#      self-correlation step are one softmax matching; DGCNN has two edge-conv stages instead of four; the data
#      loader, loss and logging are replaced by random point clouds and an L1 loss; main_gmptv.py's
#      `if torch.cuda.device_count() > 1: model = torch.nn.DataParallel(model)` is left out (one device here). backbone.py imports NumPy as
#      upstream does (unused here), so the file needs NumPy to run.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# --- models/backbone.py ---
def knn(x, k):
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    idx = pairwise_distance.topk(k=k, dim=-1)[1]  # (batch_size, num_points, k)
    return idx


def get_graph_feature(x, k=32, idx=None):
    batch_size = x.size(0)
    num_points = x.size(2)
    x = x.view(batch_size, -1, num_points)
    if idx is None:
        idx = knn(x, k=k)
    device = torch.device('cuda')  # expect: DL302
    idx_base = torch.arange(0, batch_size, device=device).view(-1, 1, 1) * num_points
    idx = idx + idx_base
    idx = idx.view(-1)
    _, num_dims, _ = x.size()
    x = x.transpose(2, 1).contiguous()
    feature = x.view(batch_size * num_points, -1)[idx, :]
    feature = feature.view(batch_size, num_points, k, num_dims)
    x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
    feature = torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()
    return feature


class DGCNN(nn.Module):
    def __init__(self, output_channels=128, k=32):
        super(DGCNN, self).__init__()
        self.outchannel = output_channels
        self.k = k
        self.bn1 = nn.BatchNorm2d(64)
        self.bn2 = nn.BatchNorm2d(64)
        self.bn5 = nn.BatchNorm1d(self.outchannel)
        self.conv1 = nn.Sequential(nn.Conv2d(6, 64, kernel_size=1, bias=False), self.bn1,
                                   nn.LeakyReLU(negative_slope=0.2))
        self.conv2 = nn.Sequential(nn.Conv2d(64 * 2, 64, kernel_size=1, bias=False), self.bn2,
                                   nn.LeakyReLU(negative_slope=0.2))
        self.conv5 = nn.Sequential(nn.Conv1d(128, self.outchannel, kernel_size=1, bias=False), self.bn5,
                                   nn.LeakyReLU(negative_slope=0.2))

    def forward(self, x):
        x = get_graph_feature(x, k=self.k)
        x = self.conv1(x)
        x1 = x.max(dim=-1, keepdim=False)[0]
        x = get_graph_feature(x1, k=self.k)
        x = self.conv2(x)
        x2 = x.max(dim=-1, keepdim=False)[0]
        x = torch.cat((x1, x2), dim=1)
        x = self.conv5(x)
        return x


# --- models/matching.py ---
def global_correlation_softmax_3d(feature0, feature1, xyzs1, xyzs2):
    b, c, n = feature0.shape
    feature0 = feature0.permute(0, 2, 1)
    feature1 = feature1.view(b, c, -1)
    correlation = torch.matmul(feature0, feature1).view(b, n, n) / (c ** 0.5)
    init_grid_1 = xyzs1.to(correlation.device)
    init_grid_2 = xyzs2.to(correlation.device)
    grid_2 = init_grid_2.permute(0, 2, 1)
    prob = F.softmax(correlation, dim=-1)
    correspondence = torch.matmul(prob, grid_2).view(b, n, 3).permute(0, 2, 1)
    flow = correspondence - init_grid_1
    return flow, prob


# --- models/gmptv.py ---
class GMPTV(nn.Module):
    def __init__(self, backbone=None, feature_channels=128):
        super(GMPTV, self).__init__()
        self.backbone = backbone
        self.feature_channels = feature_channels
        if self.backbone == 'DGCNN':
            self.DGCNN = DGCNN(output_channels=self.feature_channels)

    def forward(self, pc0, pc1, **kwargs):
        results_dict = {}
        flow_preds = []
        pc0 = torch.permute(pc0, (0, 2, 1))
        pc1 = torch.permute(pc1, (0, 2, 1))
        xyzs1, xyzs2 = pc0, pc1
        if self.backbone == 'DGCNN':
            feats0_3d = self.DGCNN(xyzs1)
            feats1_3d = self.DGCNN(xyzs2)
        flow_pred = global_correlation_softmax_3d(feats0_3d, feats1_3d, xyzs1, xyzs2)[0]
        flow_preds.append(flow_pred)
        results_dict.update({'flow_preds': flow_preds})
        return results_dict


# --- main_gmptv.py ---
if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = GMPTV(backbone='DGCNN', feature_channels=32).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=1e-4)
    model.train()
    for i in range(2):
        pcs = torch.rand(2, 64, 6)
        flow_3d = torch.rand(2, 3, 64).to(device)
        pc1 = pcs[:, :, 0:3].to(device)
        pc2 = pcs[:, :, 3:6].to(device)
        results_dict_point = model(pc0=pc1, pc1=pc2)
        loss = (results_dict_point['flow_preds'][-1] - flow_3d).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())
