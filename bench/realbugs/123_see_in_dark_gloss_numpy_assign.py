# source: https://github.com/lavi135246/pytorch-Learning-to-See-in-the-Dark/issues/10
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the training loop records each step's loss into a numpy array with g_loss[ind] = loss.data;
#      numpy converts the assigned CUDA tensor with __array__, which fails for GPU tensors.
import glob
import os

import numpy as np
import rawpy
import torch
import torch.optim as optim

from model import SeeInDark

input_dir = './dataset/Sony/short/'
gt_dir = './dataset/Sony/long/'
device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')

train_fns = glob.glob(gt_dir + '0*.ARW')
train_ids = [int(os.path.split(fn)[1][0:5]) for fn in train_fns]
ps = 512


def pack_raw(raw):
    im = raw.raw_image_visible.astype(np.float32)
    im = np.maximum(im - 512, 0) / (16383 - 512)
    im = np.expand_dims(im, axis=2)
    H, W = im.shape[0], im.shape[1]
    return np.concatenate((im[0:H:2, 0:W:2, :], im[0:H:2, 1:W:2, :],
                           im[1:H:2, 1:W:2, :], im[1:H:2, 0:W:2, :]), axis=2)


def reduce_mean(out_im, gt_im):
    return torch.abs(out_im - gt_im).mean()


g_loss = np.zeros((5000, 1))
model = SeeInDark().to(device)
model._initialize_weights()
opt = optim.Adam(model.parameters(), lr=1e-4)
for epoch in range(0, 4001):
    for ind in np.random.permutation(len(train_ids)):
        train_id = train_ids[ind]
        in_path = glob.glob(input_dir + '%05d_00*.ARW' % train_id)[0]
        gt_path = glob.glob(gt_dir + '%05d_00*.ARW' % train_id)[0]
        input_full = np.expand_dims(pack_raw(rawpy.imread(in_path)), axis=0) * 100
        gt_raw = rawpy.imread(gt_path)
        im = gt_raw.postprocess(use_camera_wb=True, half_size=False, no_auto_bright=True, output_bps=16)
        gt_full = np.expand_dims(np.float32(im / 65535.0), axis=0)

        input_patch = np.minimum(input_full[:, 0:ps, 0:ps, :], 1.0)
        gt_patch = gt_full[:, 0:ps * 2, 0:ps * 2, :]

        in_img = torch.from_numpy(input_patch).permute(0, 3, 1, 2).to(device)
        gt_img = torch.from_numpy(gt_patch).permute(0, 3, 1, 2).to(device)

        model.zero_grad()
        out_img = model(in_img)
        loss = reduce_mean(out_img, gt_img)
        loss.backward()
        opt.step()
        g_loss[ind] = loss.data  # expect: DL204

        print("%d Loss=%.3f" % (epoch, np.mean(g_loss[np.where(g_loss)])))
