# source: https://github.com/braindecode/braindecode/issues/450
# error: (issue) "zeros_for_padding is always copied to cuda:0 while x can be on any cuda:n. Their concatenation fails."
# bug: EEGResNet's _ResidualBlock.forward pads the input channels for the blocks that widen the network: it builds
#      zeros_for_padding with torch.zeros(...) on the host and, if x.is_cuda, moves it with a bare .cuda(), which
#      goes to the current GPU (cuda:0) rather than x's; with the model and batches on cuda:1 the torch.cat mixes
#      cuda:0 and cuda:1. The reporter's fix (commit fa73612, "Fix #450") builds the padding with
#      x.new_zeros((...)) and drops the is_cuda branch; the factory line is marked DL202 and the .cuda() line DL302
#      (as 2713: a bare .cuda() on a path taken because a tensor is on a GPU picks the current GPU, not the
#      tensor's); the deleted "if x.is_cuda:" line is not marked. Reductions: EEGResNet keeps its first layers, one
#      plain residual block and one block that doubles the filters (upstream has six blocks), AdaptiveAvgPool2d
#      ('auto' pool length) and the conv classifier; Ensure4d/transpose_time_to_spat/squeeze_final_output are
#      written out; the driver is a few training steps on random EEG windows on --device (the bug needs a second
#      GPU: --device cuda:1).
import argparse

import numpy as np
import torch
from torch import nn
from torch.nn import init
from torch.nn.functional import elu


class Expression(nn.Module):
    def __init__(self, expression_fn):
        super().__init__()
        self.expression_fn = expression_fn

    def forward(self, *x):
        return self.expression_fn(*x)


class Ensure4d(nn.Module):
    def forward(self, x):
        while len(x.shape) < 4:
            x = x.unsqueeze(-1)
        return x


def transpose_time_to_spat(x):
    return x.permute(0, 3, 2, 1)


def squeeze_final_output(x):
    assert x.size()[3] == 1
    x = x[:, :, :, 0]
    if x.size()[2] == 1:
        x = x[:, :, 0]
    return x


class EEGResNet(nn.Sequential):
    def __init__(self, in_chans, n_classes, input_window_samples, final_pool_length, n_first_filters,
                 n_layers_per_block=2, first_filter_length=3, nonlinearity=elu, split_first_layer=True,
                 batch_norm_alpha=0.1, batch_norm_epsilon=1e-4, conv_weight_init_fn=lambda w: init.kaiming_normal_(w, a=0)):
        super().__init__()
        self.in_chans = in_chans
        self.n_first_filters = n_first_filters
        self.n_layers_per_block = n_layers_per_block
        self.first_filter_length = first_filter_length
        self.nonlinearity = nonlinearity
        self.add_module("ensuredims", Ensure4d())
        self.add_module('dimshuffle', Expression(transpose_time_to_spat))
        self.add_module('conv_time', nn.Conv2d(1, self.n_first_filters, (self.first_filter_length, 1), stride=1,
                                               padding=(self.first_filter_length // 2, 0)))
        self.add_module('conv_spat', nn.Conv2d(self.n_first_filters, self.n_first_filters, (1, self.in_chans),
                                               stride=(1, 1), bias=False))
        n_filters_conv = self.n_first_filters
        self.add_module('bnorm', nn.BatchNorm2d(n_filters_conv, momentum=batch_norm_alpha, affine=True, eps=1e-5))
        self.add_module('conv_nonlin', Expression(self.nonlinearity))
        cur_dilation = np.array([1, 1])
        n_cur_filters = n_filters_conv
        i_block = 1
        for i_layer in range(self.n_layers_per_block):
            self.add_module('res_{:d}_{:d}'.format(i_block, i_layer),
                            _ResidualBlock(n_cur_filters, n_cur_filters, dilation=cur_dilation))
        i_block += 1
        cur_dilation[0] *= 2
        n_out_filters = int(2 * n_cur_filters)
        self.add_module('res_{:d}_{:d}'.format(i_block, 0),
                        _ResidualBlock(n_cur_filters, n_out_filters, dilation=cur_dilation))
        n_cur_filters = n_out_filters
        self.add_module('mean_pool', nn.AdaptiveAvgPool2d((1, 1)))
        self.add_module('conv_classifier', nn.Conv2d(n_cur_filters, n_classes, (1, 1), bias=True))
        self.add_module('softmax', nn.LogSoftmax(dim=1))
        self.add_module('squeeze', Expression(squeeze_final_output))
        self.eval()


class _ResidualBlock(nn.Module):
    def __init__(self, in_filters, out_num_filters, dilation, filter_time_length=3, nonlinearity=elu,
                 batch_norm_alpha=0.1, batch_norm_epsilon=1e-4):
        super(_ResidualBlock, self).__init__()
        time_padding = int((filter_time_length - 1) * dilation[0])
        assert time_padding % 2 == 0
        time_padding = int(time_padding // 2)
        dilation = (int(dilation[0]), int(dilation[1]))
        assert (out_num_filters - in_filters) % 2 == 0
        self.n_pad_chans = out_num_filters - in_filters
        self.conv_1 = nn.Conv2d(in_filters, out_num_filters, (filter_time_length, 1), stride=(1, 1),
                                dilation=dilation, padding=(time_padding, 0))
        self.bn1 = nn.BatchNorm2d(out_num_filters, momentum=batch_norm_alpha, affine=True, eps=batch_norm_epsilon)
        self.conv_2 = nn.Conv2d(out_num_filters, out_num_filters, (filter_time_length, 1), stride=(1, 1),
                                dilation=dilation, padding=(time_padding, 0))
        self.bn2 = nn.BatchNorm2d(out_num_filters, momentum=batch_norm_alpha, affine=True, eps=batch_norm_epsilon)
        self.nonlinearity = nonlinearity

    def forward(self, x):
        stack_1 = self.nonlinearity(self.bn1(self.conv_1(x)))
        stack_2 = self.bn2(self.conv_2(stack_1))
        if self.n_pad_chans != 0:
            zeros_for_padding = torch.autograd.Variable(
                torch.zeros(x.size()[0], self.n_pad_chans // 2, x.size()[2], x.size()[3]))  # expect: DL202
            if x.is_cuda:
                zeros_for_padding = zeros_for_padding.cuda()  # expect: DL302
            x = torch.cat((zeros_for_padding, x, zeros_for_padding), dim=1)
        out = self.nonlinearity(x + stack_2)
        return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    model = EEGResNet(in_chans=4, n_classes=2, input_window_samples=64, final_pool_length='auto', n_first_filters=8)
    model.to(args.device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        X = torch.randn(8, 4, 64, device=args.device)
        y = torch.randint(0, 2, (8,), device=args.device)
        loss = nn.functional.nll_loss(model(X), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
