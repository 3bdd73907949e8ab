# source: https://github.com/shunsukesaito/SCANimate/issues/8
# fixed twin: the SMPL entries of the batch are moved to the configured device with .to(cuda), as the reporter asks, so they meet the networks on the same GPU.
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class CapeDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        smpl_data = {"smpl_cano": torch.rand(3, 64), "jT": torch.rand(24, 4, 4)}
        return {"body_pose": torch.rand(72), "scan_cano_uni": torch.rand(128, 3), "smpl_data": smpl_data}


class LBSNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv1d(3, 32, 1), nn.ReLU(), nn.Conv1d(32, 24, 1))

    def forward(self, points, jT):
        lbs = torch.softmax(self.mlp(points), dim=1)  # (B, 24, N)
        T = torch.einsum("bjn,bjxy->bnxy", lbs, jT)
        return T[..., :3, 3].mean()


def pretrain_skinning_net(opt, fwd_skin_net, train_data_loader, cuda):
    optimizer = torch.optim.Adam(fwd_skin_net.parameters(), lr=1e-3)
    for train_data in train_data_loader:
        body_pose = train_data["body_pose"].to(device=cuda)
        scan_posed = train_data["scan_cano_uni"].to(device=cuda)
        smpl_data = train_data["smpl_data"]
        smpl_cano = smpl_data["smpl_cano"].to(cuda)
        jT = smpl_data["jT"].to(cuda)
        err = fwd_skin_net(smpl_cano, jT) + 1e-3 * (body_pose.pow(2).mean() + scan_posed.mean())
        optimizer.zero_grad()
        err.backward()
        optimizer.step()
    return err.item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu_id", type=int, default=0)
    opt = parser.parse_args()
    if not torch.cuda.is_available():
        print("SCANimate trains on a GPU only (as the original script); nothing to run here")
        raise SystemExit(0)
    cuda = torch.device("cuda:%d" % opt.gpu_id)
    fwd_skin_net = LBSNet().to(cuda)
    loader = DataLoader(CapeDataset(), batch_size=4)
    print(pretrain_skinning_net(opt, fwd_skin_net, loader, cuda))
