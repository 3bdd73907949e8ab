# source: https://github.com/ChaofWang/AWSRN/issues/14
# error: (test run with the option --cpu) File "code/model/awsrn.py", line 134, in forward
#        x = (x - self.rgb_mean.cuda()*255)/127.5
#        RuntimeError: Expected object of type torch.FloatTensor but found type torch.cuda.FloatTensor for argument #3 'other'
# bug: the EDSR-style framework takes the run's device from option.py's --cpu flag (model/__init__.py:
#      self.device = torch.device('cpu' if args.cpu else 'cuda'), make_model(args).to(self.device), and the trainer
#      prepares the LR batches on the same device), but AWSRN's MODEL keeps the RGB mean as a plain tensor attribute
#      and forward moves it with a hard-coded self.rgb_mean.cuda(), so with --cpu the CPU input meets a CUDA mean (on a
#      CPU-only machine the .cuda() itself raises). The maintainer's answer: "I didn't try in cpu mode ... you may
#      delete .cuda() in line 134"; the repository is unchanged, so there is no twin. The traceback line is marked
#      (DL302, the closest: a hard-coded .cuda() in a program whose device comes from configuration, as 3104; DL201
#      and the unregistered rgb_mean (DL103) are the other candidates; the same .cuda() in the de-normalisation line
#      would fail next, but the traceback stops at the first). Reductions: the trainer/data loaders/checkpoint are a
#      test loop over random LR images; two LFB blocks and small widths; no chop/self-ensemble.
import argparse
from importlib import import_module

import torch
import torch.nn as nn

parser = argparse.ArgumentParser(description='AWSRN')
parser.add_argument('--cpu', action='store_true', help='use cpu only')
parser.add_argument('--n_GPUs', type=int, default=1)
parser.add_argument('--model', default='AWSRN')
parser.add_argument('--scale', default='2')
parser.add_argument('--n_resblocks', type=int, default=2)
parser.add_argument('--n_feats', type=int, default=8)
parser.add_argument('--block_feats', type=int, default=16)
parser.add_argument('--n_colors', type=int, default=3)
parser.add_argument('--rgb_range', type=int, default=255)


def make_model(args, parent=False):
    return MODEL(args)


class Scale(nn.Module):
    def __init__(self, init_value=1e-3):
        super().__init__()
        self.scale = nn.Parameter(torch.FloatTensor([init_value]))

    def forward(self, input):
        return input * self.scale


class AWRU(nn.Module):
    def __init__(self, n_feats, kernel_size, block_feats, wn, res_scale=1, act=nn.ReLU(True)):
        super(AWRU, self).__init__()
        self.res_scale = Scale(1)
        self.x_scale = Scale(1)
        body = []
        body.append(wn(nn.Conv2d(n_feats, block_feats, kernel_size, padding=kernel_size // 2)))
        body.append(act)
        body.append(wn(nn.Conv2d(block_feats, n_feats, kernel_size, padding=kernel_size // 2)))
        self.body = nn.Sequential(*body)

    def forward(self, x):
        return self.res_scale(self.body(x)) + self.x_scale(x)


class AWMS(nn.Module):
    def __init__(self, args, scale, n_feats, kernel_size, wn):
        super(AWMS, self).__init__()
        out_feats = scale * scale * args.n_colors
        self.tail_k3 = wn(nn.Conv2d(n_feats, out_feats, 3, padding=3 // 2))
        self.tail_k5 = wn(nn.Conv2d(n_feats, out_feats, 5, padding=5 // 2))
        self.pixelshuffle = nn.PixelShuffle(scale)
        self.scale_k3 = Scale(0.5)
        self.scale_k5 = Scale(0.5)

    def forward(self, x):
        x0 = self.pixelshuffle(self.scale_k3(self.tail_k3(x)))
        x1 = self.pixelshuffle(self.scale_k5(self.tail_k5(x)))
        return x0 + x1


class LFB(nn.Module):
    def __init__(self, n_feats, kernel_size, block_feats, wn, act=nn.ReLU(True)):
        super(LFB, self).__init__()
        self.b0 = AWRU(n_feats, kernel_size, block_feats, wn=wn, act=act)
        self.b1 = AWRU(n_feats, kernel_size, block_feats, wn=wn, act=act)
        self.reduction = wn(nn.Conv2d(n_feats * 2, n_feats, 3, padding=3 // 2))
        self.res_scale = Scale(1)
        self.x_scale = Scale(1)

    def forward(self, x):
        x0 = self.b0(x)
        x1 = self.b1(x0)
        res = self.reduction(torch.cat([x0, x1], dim=1))
        return self.res_scale(res) + self.x_scale(x)


class MODEL(nn.Module):
    def __init__(self, args):
        super(MODEL, self).__init__()
        self.args = args
        scale = args.scale[0]
        n_feats = args.n_feats
        kernel_size = 3
        act = nn.ReLU(True)
        wn = lambda x: torch.nn.utils.weight_norm(x)

        self.rgb_mean = torch.autograd.Variable(torch.FloatTensor(
            [0.4488, 0.4371, 0.4040])).view([1, 3, 1, 1])

        head = [wn(nn.Conv2d(args.n_colors, n_feats, 3, padding=3 // 2))]
        body = [LFB(n_feats, kernel_size, args.block_feats, wn=wn, act=act) for _ in range(args.n_resblocks)]
        out_feats = scale * scale * args.n_colors
        tail = AWMS(args, scale, n_feats, kernel_size, wn)
        skip = [wn(nn.Conv2d(args.n_colors, out_feats, 3, padding=3 // 2)), nn.PixelShuffle(scale)]

        self.head = nn.Sequential(*head)
        self.body = nn.Sequential(*body)
        self.tail = tail
        self.skip = nn.Sequential(*skip)

    def forward(self, x):
        x = (x - self.rgb_mean.cuda()*255)/127.5  # expect: DL302
        s = self.skip(x)
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        x += s
        x = x*127.5 + self.rgb_mean.cuda()*255
        return x


class Model(nn.Module):
    def __init__(self, args):
        super(Model, self).__init__()
        print('Making model...')
        self.scale = args.scale
        self.cpu = args.cpu
        self.device = torch.device('cpu' if args.cpu else 'cuda')
        self.n_GPUs = args.n_GPUs
        self.model = make_model(args).to(self.device)
        if not args.cpu and args.n_GPUs > 1:
            self.model = nn.DataParallel(self.model, range(args.n_GPUs))

    def forward(self, x, idx_scale):
        return self.model(x)


class Trainer:
    def __init__(self, args, my_model):
        self.args = args
        self.model = my_model
        self.device = torch.device('cpu' if args.cpu else 'cuda')

    def prepare(self, *args):
        return [a.to(self.device) for a in args]

    def test(self):
        self.model.eval()
        with torch.no_grad():
            for _ in range(2):
                lr = torch.rand(1, self.args.n_colors, 12, 12) * self.args.rgb_range
                lr, = self.prepare(lr)
                sr = self.model(lr, 0)
                print(tuple(sr.shape))


if __name__ == '__main__':
    args = parser.parse_args()
    args.scale = list(map(lambda x: int(x), args.scale.split('+')))
    model = Model(args)
    t = Trainer(args, model)
    t.test()
