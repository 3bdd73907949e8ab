# source: https://github.com/zhuchen03/VIBNet/issues/9
# fixed twin: PR #10 (merged as 2ebc51c; its final commit a3a1f01 "Maintain device consistency") draws reparameterize's
#             noise with torch.FloatTensor(batch_size, std.size(0)).to(mu).normal_() instead of .cuda(mu.get_device()).
import math

import torch
from torch import nn
from torch.nn.parameter import Parameter
from torch.nn.modules import Module
from torch.autograd import Variable
import numpy as np


# --- ib_layers.py ---
def reparameterize(mu, logvar, batch_size, cuda=False, sampling=True):
    # output dim: batch_size * dim
    if sampling:
        std = logvar.mul(0.5).exp_()
        eps = torch.FloatTensor(batch_size, std.size(0)).to(mu).normal_()
        eps = Variable(eps)
        return mu.view(1, -1) + eps * std.view(1, -1)
    else:
        return mu.view(1, -1)


class InformationBottleneck(Module):
    def __init__(self, dim, mask_thresh=0, init_mag=9, init_var=0.01,
                 kl_mult=1, divide_w=False, sample_in_training=True, sample_in_testing=False, masking=False):
        super(InformationBottleneck, self).__init__()
        self.prior_z_logD = Parameter(torch.Tensor(dim))
        self.post_z_mu = Parameter(torch.Tensor(dim))
        self.post_z_logD = Parameter(torch.Tensor(dim))
        self.epsilon = 1e-8
        self.dim = dim
        self.sample_in_training = sample_in_training
        self.sample_in_testing = sample_in_testing
        self.masking = masking
        self.post_z_mu.data.normal_(1, init_var)
        self.prior_z_logD.data.normal_(-init_mag, init_var)
        self.post_z_logD.data.normal_(-init_mag, init_var)
        self.mask_thresh = mask_thresh
        self.kl_mult = kl_mult
        self.divide_w = divide_w

    def adapt_shape(self, src_shape, x_shape):
        new_shape = src_shape if len(src_shape) == 2 else (1, src_shape[0])
        if len(x_shape) > 2:
            new_shape = list(new_shape)
            new_shape += [1 for i in range(len(x_shape) - 2)]
        return new_shape

    def get_logalpha(self):
        return self.post_z_logD.data - torch.log(self.post_z_mu.data.pow(2) + self.epsilon)

    def get_mask_hard(self, threshold=0):
        logalpha = self.get_logalpha()
        return (logalpha < threshold).float()

    def get_mask_weighted(self, threshold=0):
        logalpha = self.get_logalpha()
        return (logalpha < threshold).float() * self.post_z_mu.data

    def forward(self, x):
        if self.masking:
            mask = self.get_mask_hard(self.mask_thresh)
            new_shape = self.adapt_shape(mask.size(), x.size())
            return x * Variable(mask.view(new_shape))

        bsize = x.size(0)
        if (self.training and self.sample_in_training) or (not self.training and self.sample_in_testing):
            z_scale = reparameterize(self.post_z_mu, self.post_z_logD, bsize, cuda=True, sampling=True)
            if not self.training:
                z_scale *= Variable(self.get_mask_hard(self.mask_thresh))
        else:
            z_scale = Variable(self.get_mask_weighted(self.mask_thresh))
        self.kld = self.kl_closed_form(x)
        new_shape = self.adapt_shape(z_scale.size(), x.size())
        return x * z_scale.view(new_shape)

    def kl_closed_form(self, x):
        new_shape = self.adapt_shape(self.post_z_mu.size(), x.size())
        h_D = torch.exp(self.post_z_logD.view(new_shape))
        h_mu = self.post_z_mu.view(new_shape)
        KLD = torch.sum(torch.log(1 + h_mu.pow(2) / (h_D + self.epsilon))) * x.size(1) / h_D.size(1)
        if x.dim() > 2:
            if self.divide_w:
                KLD *= x.size()[2]
            else:
                KLD *= np.prod(x.size()[2:])
        return KLD * 0.5 * self.kl_mult


# --- ib_vgg.py ---
cfg = {'S': [(16, 1.0 / 32), 'M', (32, 1.0 / 16), 'M']}


class VGG_IB(nn.Module):
    def __init__(self, config=None, mag=9, batch_norm=False, threshold=0,
                 init_var=0.01, sample_in_training=True, sample_in_testing=False, n_cls=10, no_ib=False):
        super(VGG_IB, self).__init__()
        self.init_mag = mag
        self.threshold = threshold
        self.config = config
        self.init_var = init_var
        self.sample_in_training = sample_in_training
        self.sample_in_testing = sample_in_testing
        self.no_ib = no_ib
        self.conv_layers, conv_kl_list = self.make_conv_layers(cfg[config], batch_norm)
        fc_ib1 = InformationBottleneck(64, mask_thresh=threshold, init_mag=self.init_mag, init_var=self.init_var,
                                       sample_in_training=sample_in_training, sample_in_testing=sample_in_testing)
        self.n_cls = n_cls
        self.fc_layers = nn.Sequential(nn.Linear(32 * 2 * 2, 64), nn.ReLU(), fc_ib1, nn.Linear(64, self.n_cls))
        self.kl_list = conv_kl_list + [fc_ib1]

    def make_conv_layers(self, config, batch_norm):
        layers, kl_list = [], []
        in_channels = 3
        for v in config:
            if v == 'M':
                layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                conv2d = nn.Conv2d(in_channels, v[0], kernel_size=3, padding=1)
                in_channels = v[0]
                ib = InformationBottleneck(v[0], mask_thresh=self.threshold, init_mag=self.init_mag,
                                           init_var=self.init_var, kl_mult=v[1],
                                           sample_in_training=self.sample_in_training,
                                           sample_in_testing=self.sample_in_testing)
                if batch_norm:
                    layers += [conv2d, nn.BatchNorm2d(v[0]), nn.ReLU(inplace=True)]
                else:
                    layers += [conv2d, nn.ReLU(inplace=True)]
                if not self.no_ib:
                    layers.append(ib)
                    kl_list.append(ib)
        return nn.Sequential(*layers), kl_list

    def forward(self, x):
        batch_size = x.size(0)
        x = self.conv_layers(x).view(batch_size, -1)
        x = self.fc_layers(x)
        if self.training and (not self.no_ib):
            ib_kld = self.kl_list[0].kld
            for ib in self.kl_list[1:]:
                ib_kld += ib.kld
            return x, ib_kld
        else:
            return x


# --- the reporter's CPU test (assumed driver) ---
if __name__ == '__main__':
    model = VGG_IB(config='S', mag=9, batch_norm=False, threshold=0, init_var=0.01,
                   sample_in_training=True, sample_in_testing=False, n_cls=10)
    model.train()
    criterion = torch.nn.CrossEntropyLoss()
    input_var = torch.randn(4, 3, 8, 8)
    target = torch.randint(0, 10, (4,))
    output, kl_total = model(input_var)
    loss = criterion(output, target) + kl_total
    loss.backward()
    print(loss.item())
