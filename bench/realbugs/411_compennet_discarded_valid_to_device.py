# source: https://github.com/BingyaoHuang/CompenNet/issues/2
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same
# bug: the script loads its validation images as CPU tensors and "moves" them with bare
#      x.to(device) statements whose results are thrown away, so the trained (CUDA) network is later
#      called on CPU tensors. The fix (commit 76f2896) assigns the moved tensors back.
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def read_images(n, size=64):
    return torch.rand(n, 3, size, size)


class CompenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(6, 3, 3, padding=1)

    def forward(self, x, surf):
        return torch.sigmoid(self.body(torch.cat((x, surf), dim=1)))


for data_name in ["light1", "light2"]:
    cam_surf = read_images(1)
    cam_train, prj_train = read_images(32), read_images(32)
    cam_valid, prj_valid = read_images(8), read_images(8)
    cam_valid.to(device)  # expect: DL101
    prj_valid.to(device)  # expect: DL101
    cam_surf_valid = cam_surf.expand_as(cam_valid)

    compen_net = CompenNet().to(device)
    optimizer = torch.optim.Adam(compen_net.parameters(), lr=1e-3)
    for it in range(100):
        idx = torch.randint(0, 32, (8,))
        cam, prj = cam_train[idx].to(device), prj_train[idx].to(device)
        loss = nn.functional.l1_loss(compen_net(cam, cam_surf.expand_as(cam).to(device)), prj)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    torch.cuda.empty_cache()
    cam_surf_valid.to(device)  # expect: DL101
    with torch.no_grad():
        cam_cmp = compen_net(cam_valid, cam_surf_valid).detach()
        prj_cmp = compen_net(prj_valid, cam_surf_valid).detach()
