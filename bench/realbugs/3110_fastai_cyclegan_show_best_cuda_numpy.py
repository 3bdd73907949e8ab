# source: https://github.com/fastai/course-v3/pull/519
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host
#        memory first. (nbs/dl2/cyclegan.ipynb, show_best(data.train_ds.x.items, losses_A[1], learn.model.G_B))
# bug: the notebook scores every training image with get_losses, whose batches get_batch puts on the GPU with
#      .cuda(), so losses is a CUDA tensor. show_best sorts it with losses.argsort() - a CUDA index - and indexes the
#      NumPy array of file names with it (fnames[sort_idx], which converts the index to NumPy), then hands the GPU
#      images xb and fakes, rescaled, to matplotlib's imshow, which converts them to NumPy as well. PR #519 (commit
#      5bda0fc, in cyclegan.ipynb and cyclegan_ws.ipynb) writes losses.argsort().cpu() and (1+xb.cpu())/2,
#      (1+fakes.cpu())/2; the two lines it changed are marked (DL204: GPU tensors handed to NumPy, through the
#      array index and through imshow). Reductions: fastai's Learner, CycleGAN, open_image/apply_tfms and the
#      horse2zebra data are small stand-ins (random images, a one-layer generator and critic, a least-squares
#      critic loss); the notebook's hard-coded .cuda() is kept, so it is GPU-only, and it needs NumPy and
#      matplotlib.
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn


class Image:
    def __init__(self, data):
        self.data = data

    def apply_tfms(self, tfms, size=128, **kwargs):
        return Image(nn.functional.interpolate(self.data[None], size=(size, size))[0])


def open_image(fn):
    return Image(torch.rand(3, 64, 64))


class AdaptiveLoss(nn.Module):
    def forward(self, output, target, reduction='mean'):
        t = torch.ones_like(output) if target else torch.zeros_like(output)
        return nn.functional.mse_loss(output, t, reduction=reduction)


def get_batch(filenames, tfms, **kwargs):
    samples = [open_image(fn) for fn in filenames]
    for s in samples:
        s = s.apply_tfms(tfms, **kwargs)
    batch = torch.stack([s.data for s in samples], 0).cuda()
    return 2. * (batch - 0.5)


def get_losses(fnames, gen, crit, bs=16):
    losses_in, losses_out = [], []
    with torch.no_grad():
        for i in range(0, len(fnames), bs):
            xb = get_batch(fnames[i:i + bs], tfms, size=128)
            fakes = gen(xb)
            preds_in, preds_out = crit(xb), crit(fakes)
            loss_in = learn.loss_func.crit(preds_in, True, reduction='none')
            loss_out = learn.loss_func.crit(preds_out, True, reduction='none')
            losses_in.append(loss_in.view(loss_in.size(0), -1).mean(1))
            losses_out.append(loss_out.view(loss_out.size(0), -1).mean(1))
    return torch.cat(losses_in), torch.cat(losses_out)


def show_best(fnames, losses, gen, n=8):
    sort_idx = losses.argsort()  # expect: DL204
    _, axs = plt.subplots(n // 2, 4, figsize=(12, 2 * n))
    xb = get_batch(fnames[sort_idx][:n], tfms, size=128)
    with torch.no_grad():
        fakes = gen(xb)
    xb, fakes = (1 + xb) / 2, (1 + fakes) / 2  # expect: DL204
    for i in range(n):
        axs.flatten()[2 * i].imshow(xb[i].permute(1, 2, 0))
        axs.flatten()[2 * i].axis('off')
        axs.flatten()[2 * i + 1].imshow(fakes[i].permute(1, 2, 0))
        axs.flatten()[2 * i + 1].set_title(losses[sort_idx][i].item())
        axs.flatten()[2 * i + 1].axis('off')


if __name__ == "__main__":
    G_B = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.Tanh()).cuda().eval()
    D_B = nn.Sequential(nn.Conv2d(3, 1, 4, stride=2, padding=1)).cuda().eval()
    items = np.array(['horse2zebra/trainA/n0238_{}.jpg'.format(i) for i in range(40)])
    tfms = None
    learn = SimpleNamespace(loss_func=SimpleNamespace(crit=AdaptiveLoss()))
    losses_A = get_losses(items, G_B, D_B)
    show_best(items, losses_A[1], G_B)
    plt.savefig('best_A.png')
