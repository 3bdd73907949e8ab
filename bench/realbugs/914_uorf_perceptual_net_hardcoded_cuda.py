# source: https://github.com/KovenYu/uORF/pull/17
# error: (training / evaluation with --gpu_ids -1 on a machine without a GPU) .cuda() fails, e.g. AssertionError: Torch not compiled with CUDA enabled
# bug: the model classes derive self.device from --gpu_ids (the CPU for -1) and build their networks
#      through init_net on that device, but the auxiliary loss networks (the VGG perceptual net of
#      the training models, LPIPS of the evaluation model) are moved with a bare .cuda(), so running
#      on the CPU fails (and on a GPU other than cuda:0 they sit on the wrong card). The fix (commit
#      182738e) uses .to(self.device) in each model file; the two reproduced lines are marked (DL302).
#      This script fails on a CPU-only machine by design: that is the reported failure.
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


def init_net(net, gpu_ids=()):
    if len(gpu_ids) > 0:
        net.to(gpu_ids[0])
        if len(gpu_ids) > 1:
            net = nn.DataParallel(net, gpu_ids)
    return net


def get_perceptual_net():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1)).eval()


class LPIPS(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = get_perceptual_net()

    def forward(self, x, y):
        return (self.features(x) - self.features(y)).pow(2).mean()


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.gpu_ids = opt.gpu_ids
        self.device = torch.device("cuda:{}".format(self.gpu_ids[0])) if self.gpu_ids else torch.device("cpu")


class UorfNoGanModel(BaseModel):
    def __init__(self, opt):
        super().__init__(opt)
        self.netEncoder = init_net(nn.Conv2d(3, 3, 3, padding=1), gpu_ids=self.gpu_ids)
        self.perceptual_net = get_perceptual_net().cuda()  # expect: DL302
        self.optimizer = torch.optim.Adam(self.netEncoder.parameters(), lr=1e-3)

    def optimize_parameters(self, x):
        x = x.to(self.device)
        x_rec = self.netEncoder(x)
        loss = F.mse_loss(x_rec, x) + F.mse_loss(self.perceptual_net(x_rec), self.perceptual_net(x))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class UorfEvalModel(BaseModel):
    def __init__(self, opt, encoder):
        super().__init__(opt)
        self.netEncoder = encoder
        self.LPIPS_loss = LPIPS().cuda()  # expect: DL302

    @torch.no_grad()
    def compute_visuals(self, x):
        x = x.to(self.device)
        return self.LPIPS_loss(self.netEncoder(x), x).item()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu_ids", default="0" if torch.cuda.is_available() else "-1")
    opt = parser.parse_args()
    opt.gpu_ids = [int(i) for i in opt.gpu_ids.split(",") if int(i) >= 0]
    model = UorfNoGanModel(opt)
    print(model.optimize_parameters(torch.rand(2, 3, 16, 16)))
    print(UorfEvalModel(opt, model.netEncoder).compute_visuals(torch.rand(2, 3, 16, 16)))
