# source: https://github.com/3d-hand-shape/hand-graph-cnn/issues/5
# fixed twin: commit 17fd76e stops sparse_python_to_torch from moving each Laplacian with .cuda() whenever CUDA is
#             available; commit 973ba76 makes ShapePoseNetwork.to() move graph_L to the model's device and hand the
#             moved list to net_feat_mesh.mesh_net and net_mesh_pose.
import torch
import torch.nn as nn


class my_sparse_mm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, W, x):
        ctx.save_for_backward(W, x)
        y = torch.mm(W, x)
        return y


def sparse_python_to_torch(sp_python):
    L = sp_python.to_sparse()
    return L


def build_hand_graph(num_levels=5, num_vertex=64):
    graph_L = []
    for i in range(num_levels):
        v = num_vertex // 2 ** i
        adj = (torch.rand(v, v) < 0.2).float()
        adj = ((adj + adj.T) > 0).float()
        graph_L.append(torch.eye(v) - adj / adj.sum(1, keepdim=True).clamp(min=1))
    graph_mask = torch.ones(num_vertex, 3)
    return graph_L, graph_mask


class Graph_CNN_Feat_Mesh(nn.Module):
    def __init__(self, num_input_chan, num_mesh_output_chan, graph_L):
        super(Graph_CNN_Feat_Mesh, self).__init__()
        self.graph_L = graph_L
        self.fc = nn.Linear(num_input_chan, 16 * self.graph_L[-1].shape[0])
        self.cl = nn.ModuleList([nn.Linear(3 * 16, 16), nn.Linear(3 * 16, num_mesh_output_chan)])
        for graph_i in range(len(graph_L)):
            self.graph_L[graph_i] = sparse_python_to_torch(self.graph_L[graph_i])

    def graph_conv_cheby(self, x, cl, L, Fout, K):
        B, V, Fin = x.size()
        x0 = x.permute(1, 2, 0).contiguous().view([V, Fin * B])
        x = x0.unsqueeze(0)
        x1 = my_sparse_mm.apply(L, x0)
        x = torch.cat((x, x1.unsqueeze(0)), 0)
        for k in range(2, K):
            x2 = 2 * my_sparse_mm.apply(L, x1) - x0
            x = torch.cat((x, x2.unsqueeze(0)), 0)
            x0, x1 = x1, x2
        x = x.view([K, V, Fin, B]).permute(3, 1, 2, 0).contiguous().view([B * V, Fin * K])
        return cl(x).view([B, V, Fout])

    def forward(self, x):
        x = self.fc(x).view(-1, self.graph_L[-1].shape[0], 16)
        for i, cl in enumerate(self.cl):
            x = x.repeat_interleave(4, dim=1)
            x = self.graph_conv_cheby(x, cl, self.graph_L[-(i * 2 + 3)], cl.out_features, 3)
        return x


class Net_HM_Feat_Mesh(nn.Module):
    def __init__(self, num_feat_chan, num_mesh_output_chan, graph_L):
        super(Net_HM_Feat_Mesh, self).__init__()
        self.feat_net = nn.Sequential(nn.Conv2d(3, num_feat_chan, 4, stride=4), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.mesh_net = Graph_CNN_Feat_Mesh(num_feat_chan, num_mesh_output_chan, graph_L)

    def forward(self, images):
        return self.mesh_net(self.feat_net(images))


class Graph_CNN_Mesh_Pose(nn.Module):
    def __init__(self, num_mesh_input_chan, num_output_chan, graph_L):
        super(Graph_CNN_Mesh_Pose, self).__init__()
        self.graph_L = graph_L
        self.cl = nn.ModuleList([nn.Linear(3 * num_mesh_input_chan, 32), nn.Linear(3 * 32, 64)])
        self.fc = nn.Linear(64 * self.graph_L[-1].shape[0], num_output_chan)

    def graph_conv_cheby(self, x, cl, L, Fout, K):
        B, V, Fin = x.size()
        x0 = x.permute(1, 2, 0).contiguous().view([V, Fin * B])
        x = x0.unsqueeze(0)
        x1 = my_sparse_mm.apply(L, x0)
        x = torch.cat((x, x1.unsqueeze(0)), 0)
        for k in range(2, K):
            x2 = 2 * my_sparse_mm.apply(L, x1) - x0
            x = torch.cat((x, x2.unsqueeze(0)), 0)
            x0, x1 = x1, x2
        x = x.view([K, V, Fin, B]).permute(3, 1, 2, 0).contiguous().view([B * V, Fin * K])
        return cl(x).view([B, V, Fout])

    def forward(self, x):
        for block_i, cl in enumerate(self.cl):
            x = self.graph_conv_cheby(x, cl, self.graph_L[block_i * 2], cl.out_features, 3)
            x = nn.MaxPool1d(4)(x.permute(0, 2, 1)).permute(0, 2, 1)
        return self.fc(x.reshape(x.shape[0], -1))


class ShapePoseNetwork(nn.Module):
    def __init__(self, num_joints=21):
        super(ShapePoseNetwork, self).__init__()
        self.graph_L, self.graph_mask = build_hand_graph()
        self.net_feat_mesh = Net_HM_Feat_Mesh(32, 3, self.graph_L)
        self.net_mesh_pose = Graph_CNN_Mesh_Pose(3, num_joints - 1, self.graph_L)

    def to(self, *args, **kwargs):
        super(ShapePoseNetwork, self).to(*args, **kwargs)
        self.graph_L = [l.to(*args, **kwargs) for l in self.graph_L]
        self.net_feat_mesh.mesh_net.graph_L = self.graph_L
        self.net_mesh_pose.graph_L = self.graph_L
        self.graph_mask = self.graph_mask.to(*args, **kwargs)

    def forward(self, images):
        est_mesh_uvd = self.net_feat_mesh(images)
        est_mesh_uvd = est_mesh_uvd * self.graph_mask.unsqueeze(0).expand_as(est_mesh_uvd)
        return est_mesh_uvd, self.net_mesh_pose(est_mesh_uvd)


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = {"MODEL": {"DEVICE": "cpu", "BATCH_SIZE": 2}}
    model = ShapePoseNetwork()
    device = cfg["MODEL"]["DEVICE"]
    model.to(device)
    model.eval()
    cpu_device = torch.device("cpu")
    for i in range(2):
        images = torch.rand(cfg["MODEL"]["BATCH_SIZE"], 3, 32, 32)
        images = images.to(device)
        with torch.no_grad():
            est_mesh, est_pose = model(images)
            est_pose = [o.to(cpu_device) for o in est_pose]
        print(i, tuple(est_mesh.shape), len(est_pose))
