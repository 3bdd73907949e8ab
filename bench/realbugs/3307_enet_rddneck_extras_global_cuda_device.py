# source: https://github.com/iArunava/ENet-Real-Time-Semantic-Segmentation/issues/14
# error: (issue, "py init.py --mode test -i seq1.jpg --cuda True") File "models/RDDNeck.py", line 110, in forward:
#        x_copy = torch.cat((x_copy, extras), dim = 1) - "RuntimeError: Expected object of backend CUDA but got backend
#        CPU for sequence element 0 in sequence argument at position #1 'tensors'"
# bug: models/RDDNeck.py fixes a module-level device = cuda:0 whenever CUDA is available, and RDDNeck.forward builds
#      the zero channels for its widening blocks with torch.zeros(...) and moves them there with extras.to(device).
#      test.py (the --mode test path of init.py) restores the checkpoint with map_location='cpu', never moves the ENet
#      and feeds it a CPU image, so on any machine with a GPU the first widening bottleneck (b10) concatenates the CPU
#      main branch with CUDA zeros; init.py's FLAGS.cuda device is not used by test(). The maintainer's answer ("you
#      didn't pass the input ... to cuda device") and commit 8a09a70 ("fixing bug on inference, using the same device
#      as defined using argparse", map_location=FLAGS.cuda) do not change where the model or the image live
#      (load_state_dict copies into the CPU parameters), so there is no twin; the line the traceback points to is
#      marked (DL201); the module-level device used in forward is the DL206 candidate. Reductions: ENet keeps the
#      initial block, b10 (16 -> 64 channels, downsampling) and b11, and a transposed-conv head instead of the
#      remaining ASNeck/UBNeck stages; plt.imread/cv2.resize are a random NumPy image; decode_segmap/show_images are
#      dropped; the driver writes a CPU checkpoint first when -m is not given. Needs NumPy (init.py and test's
#      output conversion, as upstream).
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

# --- models/RDDNeck.py ---
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class RDDNeck(nn.Module):
    def __init__(self, dilation, in_channels, out_channels, down_flag, relu=False, projection_ratio=4, p=0.1):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.dilation = dilation
        self.down_flag = down_flag
        if down_flag:
            self.stride = 2
            self.reduced_depth = int(in_channels // projection_ratio)
        else:
            self.stride = 1
            self.reduced_depth = int(out_channels // projection_ratio)
        activation = nn.ReLU() if relu else nn.PReLU()
        self.maxpool = nn.MaxPool2d(kernel_size=2, stride=2, padding=0, return_indices=True)
        self.dropout = nn.Dropout2d(p=p)
        self.conv1 = nn.Conv2d(self.in_channels, self.reduced_depth, kernel_size=1, stride=1, padding=0, bias=False)
        self.prelu1 = activation
        self.conv2 = nn.Conv2d(self.reduced_depth, self.reduced_depth, kernel_size=3, stride=self.stride,
                               padding=self.dilation, bias=True, dilation=self.dilation)
        self.prelu2 = activation
        self.conv3 = nn.Conv2d(self.reduced_depth, self.out_channels, kernel_size=1, stride=1, padding=0, bias=False)
        self.prelu3 = activation
        self.batchnorm = nn.BatchNorm2d(self.reduced_depth)
        self.batchnorm2 = nn.BatchNorm2d(self.out_channels)

    def forward(self, x):
        bs = x.size()[0]
        x_copy = x
        x = self.prelu1(self.batchnorm(self.conv1(x)))
        x = self.prelu2(self.batchnorm(self.conv2(x)))
        x = self.batchnorm2(self.conv3(x))
        x = self.dropout(x)
        if self.down_flag:
            x_copy, indices = self.maxpool(x_copy)
        if self.in_channels != self.out_channels:
            out_shape = self.out_channels - self.in_channels
            extras = torch.zeros((bs, out_shape, x.shape[2], x.shape[3]))
            extras = extras.to(device)
            x_copy = torch.cat((x_copy, extras), dim=1)  # expect: DL201
        x = x + x_copy
        x = self.prelu3(x)
        if self.down_flag:
            return x, indices
        else:
            return x


# --- models/InitialBlock.py ---
class InitialBlock(nn.Module):
    def __init__(self, in_channels=3, out_channels=13):
        super().__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=2, stride=2, padding=0)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)
        self.prelu = nn.PReLU(16)
        self.batchnorm = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        main = self.batchnorm(self.conv(x))
        side = self.maxpool(x)
        x = torch.cat((main, side), dim=1)
        return self.prelu(x)


# --- models/ENet.py ---
class ENet(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.C = C
        self.init = InitialBlock()
        self.b10 = RDDNeck(dilation=1, in_channels=16, out_channels=64, down_flag=True, p=0.01)
        self.b11 = RDDNeck(dilation=1, in_channels=64, out_channels=64, down_flag=False, p=0.01)
        self.fullconv = nn.ConvTranspose2d(64, self.C, kernel_size=4, stride=4, bias=False)

    def forward(self, x):
        x = self.init(x)
        x, i1 = self.b10(x)
        x = self.b11(x)
        return self.fullconv(x)


# --- test.py ---
def test(FLAGS):
    if not FLAGS.m.endswith('.pth'):
        raise RuntimeError('Unknown file passed. Must end with .pth')
    h = FLAGS.resize_height
    w = FLAGS.resize_width

    checkpoint = torch.load(FLAGS.m, map_location='cpu')

    enet = ENet(12)
    enet.load_state_dict(checkpoint['state_dict'])

    tmg_ = np.random.rand(h, w, 3).astype(np.float32)
    tmg = torch.tensor(tmg_).unsqueeze(0).float()
    tmg = tmg.transpose(2, 3).transpose(1, 2)

    with torch.no_grad():
        out1 = enet(tmg.float()).squeeze(0)

    b_ = out1.data.max(0)[1].cpu().numpy()
    print(b_.shape)


# --- init.py ---
if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-m', type=str, default=None)
    parser.add_argument('-rh', '--resize-height', type=int, default=64)
    parser.add_argument('-rw', '--resize-width', type=int, default=64)
    parser.add_argument('--cuda', type=bool, default=False, help='Whether to use cuda or not')
    parser.add_argument('--mode', choices=['train', 'test'], default='test')
    FLAGS, unparsed = parser.parse_known_args()
    FLAGS.cuda = torch.device('cuda:0' if torch.cuda.is_available() and FLAGS.cuda else 'cpu')
    if FLAGS.m is None:
        FLAGS.m = os.path.join(tempfile.mkdtemp(), 'ckpt-enet.pth')
        torch.save({'epochs': 0, 'state_dict': ENet(12).state_dict()}, FLAGS.m)
    if FLAGS.mode.lower() == 'test':
        test(FLAGS)
