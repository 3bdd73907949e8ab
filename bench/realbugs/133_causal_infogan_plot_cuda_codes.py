# source: https://github.com/thanard/causal-infogan/issues/3
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (inside plt.imshow)
# bug: the trainer builds its evaluation codes as CUDA tensors and passes c.t().data (still on the GPU)
#      to plot_img, which hands it to plt.imshow; the same happens for the transitioned codes each epoch.
import os

import matplotlib.pyplot as plt
import torch
from torch.autograd import Variable


def plot_img(img, path, vrange=None, title=None):
    if title is not None:
        plt.title(title)
    if vrange is None:
        vrange = (0, 1)
    plt.imshow(img, vmin=vrange[0], vmax=vrange[1], cmap='gray', aspect='auto')
    plt.savefig(path)
    plt.close()


class Trainer:
    def __init__(self, G, D, Q, T, P, c_dim, rand_z_dim, out_dir):
        self.G, self.D, self.Q, self.T, self.P = G, D, Q, T, P
        self.c_dim = c_dim
        self.rand_z_dim = rand_z_dim
        self.out_dir = out_dir
        self.test_sample_size = 12
        self.test_num_codes = max(20, self.c_dim + 1)
        self.eval_input = self._eval_noise()

    def _eval_noise(self):
        more_codes = self.test_num_codes - (self.c_dim + 1)
        c = Variable(torch.cuda.FloatTensor(
            [[j < i for j in range(self.c_dim)] for i in range(min(self.test_num_codes, self.c_dim + 1))])) * (
            self.P.unif_range[1] - self.P.unif_range[0]) + self.P.unif_range[0]
        if more_codes > 0:
            c = torch.cat([c, self.P.sample(more_codes)], 0)
        self.eval_c = c
        z = Variable(torch.FloatTensor(self.test_sample_size, self.rand_z_dim).normal_(0, 1).cuda())

        plot_img(c.t().data,  # expect: DL204
                 os.path.join(self.out_dir, 'gen', 'eval_code.png'),
                 vrange=self.P.unif_range)
        return z[:, None, :].repeat(1, self.test_num_codes, 1).view(-1, self.rand_z_dim), \
            c.repeat(1, 1, self.test_sample_size).permute(2, 0, 1).contiguous().view(-1, self.c_dim)

    def get_c_next(self, epoch):
        c_next = self.T(self.eval_c)
        plot_img(c_next.t().data,  # expect: DL204
                 os.path.join(self.out_dir, 'gen', 'eval_code_next_%d.png' % epoch),
                 vrange=self.P.unif_range)
        return c_next
