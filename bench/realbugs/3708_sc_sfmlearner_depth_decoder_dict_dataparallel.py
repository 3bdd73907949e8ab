# source: https://github.com/JiawangBian/SC-SfMLearner-Release/issues/60
# error: RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2
#        'weight'; but device 1 does not equal 0 (while checking arguments for cudnn_convolution)
#        (DataParallel replica -> models/DispResNet.py line 116, outputs = self.decoder(features) -> line 91,
#        x = self.convs[("upconv", i, 0)](x))
# bug: DepthDecoder (taken from monodepth2) keeps its ConvBlocks in a plain OrderedDict, self.convs, and registers
#      them only through self.decoder = nn.ModuleList(list(self.convs.values())). model.to(device) moves them, but
#      train.py wraps DispResNet in torch.nn.DataParallel, whose replicas share the original self.convs dict, so the
#      replica on device 1 calls the device-0 convolutions. The cause is the one monodepth2's authors gave for the
#      same decoder ("the convolutions ... are stored in a self.convs dictionary. Pytorch does not detect that, even
#      when it is declared with nn.ModuleList", nianticlabs/monodepth2#5; #322 fixed it with nn.ModuleDict). No fix in
#      this repository (issues #48, #55, #60 closed; models/DispResNet.py unchanged since 7ebdcfa), so the line of the
#      traceback is marked; DL105 (plain-container-of-modules) is the rule of the cause, DL205 (DataParallel) the other
#      candidate.
#      Reductions: ResnetEncoder keeps its five-feature forward but builds a small conv stack instead of a torchvision
#      ResNet-18 (absent here); PoseResNet, the loss, the optimizer loop and the data loader are cut; train.py's model
#      creation, DataParallel wrap and compute_depth are kept. Needs two GPUs to reach the bug; NumPy is imported as
#      upstream (absent here), so the file does not run on this machine.
from __future__ import absolute_import, division, print_function
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# --- models/resnet_encoder.py (stand-in layers) ---
class ResnetEncoder(nn.Module):
    def __init__(self, num_layers, pretrained, num_input_images=1):
        super(ResnetEncoder, self).__init__()

        self.num_ch_enc = np.array([64, 64, 128, 256, 512])
        chans = [3 * num_input_images] + list(self.num_ch_enc)
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(int(chans[i]), int(chans[i + 1]), 3, stride=2, padding=1),
                                                   nn.ReLU(inplace=True)) for i in range(5)])

    def forward(self, input_image):
        self.features = []
        x = input_image
        for stage in self.stages:
            x = stage(x)
            self.features.append(x)

        return self.features


# --- models/DispResNet.py ---
class ConvBlock(nn.Module):
    """Layer to perform a convolution followed by ELU
    """
    def __init__(self, in_channels, out_channels):
        super(ConvBlock, self).__init__()

        self.conv = Conv3x3(in_channels, out_channels)
        self.nonlin = nn.ELU(inplace=True)

    def forward(self, x):
        out = self.conv(x)
        out = self.nonlin(out)
        return out


class Conv3x3(nn.Module):
    """Layer to pad and convolve input
    """
    def __init__(self, in_channels, out_channels, use_refl=True):
        super(Conv3x3, self).__init__()

        if use_refl:
            self.pad = nn.ReflectionPad2d(1)
        else:
            self.pad = nn.ZeroPad2d(1)
        self.conv = nn.Conv2d(int(in_channels), int(out_channels), 3)

    def forward(self, x):
        out = self.pad(x)
        out = self.conv(out)
        return out


def upsample(x):
    """Upsample input tensor by a factor of 2
    """
    return F.interpolate(x, scale_factor=2, mode="nearest")


class DepthDecoder(nn.Module):
    def __init__(self, num_ch_enc, scales=range(4), num_output_channels=1, use_skips=True):
        super(DepthDecoder, self).__init__()

        self.alpha = 10
        self.beta = 0.01

        self.num_output_channels = num_output_channels
        self.use_skips = use_skips
        self.upsample_mode = 'nearest'
        self.scales = scales

        self.num_ch_enc = num_ch_enc
        self.num_ch_dec = np.array([16, 32, 64, 128, 256])

        # decoder
        self.convs = OrderedDict()
        for i in range(4, -1, -1):
            # upconv_0
            num_ch_in = self.num_ch_enc[-1] if i == 4 else self.num_ch_dec[i + 1]
            num_ch_out = self.num_ch_dec[i]
            self.convs[("upconv", i, 0)] = ConvBlock(num_ch_in, num_ch_out)

            # upconv_1
            num_ch_in = self.num_ch_dec[i]
            if self.use_skips and i > 0:
                num_ch_in += self.num_ch_enc[i - 1]
            num_ch_out = self.num_ch_dec[i]
            self.convs[("upconv", i, 1)] = ConvBlock(num_ch_in, num_ch_out)

        for s in self.scales:
            self.convs[("dispconv", s)] = Conv3x3(self.num_ch_dec[s], self.num_output_channels)

        self.decoder = nn.ModuleList(list(self.convs.values()))
        self.sigmoid = nn.Sigmoid()

    def forward(self, input_features):
        self.outputs = []

        # decoder
        x = input_features[-1]
        for i in range(4, -1, -1):
            x = self.convs[("upconv", i, 0)](x)  # expect: DL105
            x = [upsample(x)]
            if self.use_skips and i > 0:
                x += [input_features[i - 1]]
            x = torch.cat(x, 1)
            x = self.convs[("upconv", i, 1)](x)
            if i in self.scales:
                self.outputs.append(self.alpha * self.sigmoid(self.convs[("dispconv", i)](x)) + self.beta)

        self.outputs = self.outputs[::-1]
        return self.outputs


class DispResNet(nn.Module):

    def __init__(self, num_layers = 18, pretrained = True):
        super(DispResNet, self).__init__()
        self.encoder = ResnetEncoder(num_layers = num_layers, pretrained = pretrained, num_input_images=1)
        self.decoder = DepthDecoder(self.encoder.num_ch_enc)

    def init_weights(self):
        pass

    def forward(self, x):
        features = self.encoder(x)
        outputs = self.decoder(features)

        if self.training:
            return outputs
        else:
            return outputs[0]


# --- train.py ---
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def compute_depth(disp_net, tgt_img, ref_imgs):
    tgt_depth = [1/disp for disp in disp_net(tgt_img)]

    ref_depths = []
    for ref_img in ref_imgs:
        ref_depth = [1/disp for disp in disp_net(ref_img)]
        ref_depths.append(ref_depth)

    return tgt_depth, ref_depths


def main():
    print("=> creating model")
    disp_net = DispResNet(18, False).to(device)

    disp_net = torch.nn.DataParallel(disp_net)

    disp_net.train()
    tgt_img = torch.rand(4, 3, 256, 832).to(device)
    ref_imgs = [torch.rand(4, 3, 256, 832).to(device) for i in range(2)]
    tgt_depth, ref_depths = compute_depth(disp_net, tgt_img, ref_imgs)
    print(tgt_depth[0].size())


if __name__ == '__main__':
    main()
