# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/22
# error: RuntimeError: Some of weight/gradient/input tensors are located on different GPUs
# bug: the model picks torch.cuda.FloatTensor as its tensor type and GANLoss builds its label tensors
#      with it; that constructor allocates on the current device (GPU 0), while the networks were moved
#      to gpu_ids[0] (e.g. GPU 1). Upstream fixed it by making gpu_ids[0] the current device.
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable


class BaseOptions():
    def __init__(self):
        self.parser = argparse.ArgumentParser()
        self.parser.add_argument('--gpu_ids', type=str, default='0', help='gpu ids: e.g. 0  0,1,2, 0,2')
        self.parser.add_argument('--no_lsgan', action='store_true')

    def parse(self):
        opt = self.parser.parse_args()
        opt.gpu_ids = [int(s) for s in opt.gpu_ids.split(',') if int(s) >= 0]
        # set gpu ids
        if len(opt.gpu_ids) > 0:
            torch.cuda.set_device(opt.gpu_ids[0])
        return opt


class GANLoss(nn.Module):
    def __init__(self, use_lsgan=True, target_real_label=1.0, target_fake_label=0.0, tensor=torch.FloatTensor):
        super(GANLoss, self).__init__()
        self.real_label = target_real_label
        self.fake_label = target_fake_label
        self.real_label_var = None
        self.fake_label_var = None
        self.Tensor = tensor
        self.loss = nn.MSELoss() if use_lsgan else nn.BCELoss()

    def get_target_tensor(self, input, target_is_real):
        if target_is_real:
            if self.real_label_var is None or self.real_label_var.numel() != input.numel():
                real_tensor = self.Tensor(input.size()).fill_(self.real_label)
                self.real_label_var = Variable(real_tensor, requires_grad=False)
            return self.real_label_var
        if self.fake_label_var is None or self.fake_label_var.numel() != input.numel():
            fake_tensor = self.Tensor(input.size()).fill_(self.fake_label)
            self.fake_label_var = Variable(fake_tensor, requires_grad=False)
        return self.fake_label_var

    def __call__(self, input, target_is_real):
        return self.loss(input, self.get_target_tensor(input, target_is_real))


def define_D(input_nc, ndf, gpu_ids):
    netD = nn.Sequential(
        nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
        nn.Conv2d(ndf * 2, 1, 4, 1, 1),
    )
    if len(gpu_ids) > 0:
        netD.cuda(gpu_ids[0])
    return netD


class Pix2PixModel():
    def initialize(self, opt):
        self.gpu_ids = opt.gpu_ids
        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor
        self.netD = define_D(6, 64, self.gpu_ids)
        self.criterionGAN = GANLoss(use_lsgan=not opt.no_lsgan, tensor=self.Tensor)

    def backward_D(self, real_AB, fake_AB):
        pred_fake = self.netD(fake_AB.detach())
        loss_D_fake = self.criterionGAN(pred_fake, False)
        pred_real = self.netD(real_AB)
        loss_D_real = self.criterionGAN(pred_real, True)
        loss_D = (loss_D_fake + loss_D_real) * 0.5
        loss_D.backward()
        return loss_D


if __name__ == '__main__':
    opt = BaseOptions().parse()  # run with --gpu_ids 1
    model = Pix2PixModel()
    model.initialize(opt)
    real_AB = torch.randn(1, 6, 256, 256).cuda(opt.gpu_ids[0])
    fake_AB = torch.randn(1, 6, 256, 256).cuda(opt.gpu_ids[0])
    model.backward_D(real_AB, fake_AB)
