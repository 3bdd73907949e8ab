# source: https://github.com/jwyang/fpn.pytorch/issues/45
# error: (resuming training with --r True --cuda) RuntimeError: Expected object of type torch.FloatTensor but found type
#        torch.cuda.FloatTensor for argument #4 'other', in optimizer.step()
# bug: trainval_net.py builds FPN on the CPU, builds the optimizer, and on --r restores the checkpoint (saved from GPU
#      training) with optimizer.load_state_dict while FPN is still on the CPU: load_state_dict casts the momentum
#      buffers to the device of their parameters, the CPU; only afterwards does `if args.cuda: FPN.cuda()` move the
#      parameters, so the first SGD step adds CUDA gradients to CPU momentum buffers. The reporter's fix (the issue is
#      open; trainval_net.py unchanged) adds `if args.cuda: FPN.cuda()` above the resume block; that moved line is
#      marked (DL407, the closest rule: the state is loaded into the optimizer before the move). Reductions: the
#      roidb/roibatchLoader data pipeline is a random batch, the FPN resnet is a small module with create_architecture
#      and the same per-parameter groups; logging, tensorboard and the mGPUs branch's loss prints are dropped; the
#      driver first writes a checkpoint after one step (on the GPU when there is one), then resumes from it; the
#      holder is refilled with im_data.resize_(...).copy_(...) under no_grad (upstream's im_data.data.resize_(...) raises
#      "set_sizes_contiguous is not allowed on a Tensor created from .data or .detach()" since PyTorch 1.1, per
#      jwyang/faster-rcnn.pytorch#543 and #483; the no_grad form recommended there replaces it).
import argparse
import os
import tempfile

import torch
import torch.nn as nn
from torch.autograd import Variable


class resnet(nn.Module):
    def __init__(self, classes, num_layers=101, pretrained=False, class_agnostic=False):
        super(resnet, self).__init__()
        self.classes = classes
        self.class_agnostic = class_agnostic

    def create_architecture(self):
        self.RCNN_base = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.RCNN_cls_score = nn.Linear(8, len(self.classes))

    def forward(self, im_data):
        feat = self.RCNN_base(im_data).mean((2, 3))
        return self.RCNN_cls_score(feat)


def parse_args(argv):
    parser = argparse.ArgumentParser(description='Train a FPN network')
    parser.add_argument('--cuda', dest='cuda', action='store_true')
    parser.add_argument('--mGPUs', dest='mGPUs', action='store_true')
    parser.add_argument('--lr', dest='lr', default=0.001, type=float)
    parser.add_argument('--r', dest='resume', default=False, type=bool)
    parser.add_argument('--save_dir', dest='save_dir', default=tempfile.mkdtemp())
    parser.add_argument('--s', dest='session', default=1, type=int)
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    output_dir = args.save_dir
    classes = ('__background__', 'car', 'person')

    im_data = torch.FloatTensor(1)
    if args.cuda:
        im_data = im_data.cuda()
    im_data = Variable(im_data)

    FPN = resnet(classes, 101, pretrained=False)
    FPN.create_architecture()

    lr = args.lr
    params = []
    for key, value in dict(FPN.named_parameters()).items():
        if value.requires_grad:
            if 'bias' in key:
                params += [{'params': [value], 'lr': lr * 2, 'weight_decay': 0}]
            else:
                params += [{'params': [value], 'lr': lr, 'weight_decay': 0.0001}]
    optimizer = torch.optim.SGD(params, momentum=0.9)

    load_name = os.path.join(output_dir, 'fpn_1_1_0.pth')
    if args.resume:
        checkpoint = torch.load(load_name)
        args.session = checkpoint['session']
        FPN.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        lr = optimizer.param_groups[0]['lr']

    if args.mGPUs:
        FPN = nn.DataParallel(FPN)

    if args.cuda:
        FPN.cuda()  # expect: DL407

    FPN.train()
    data = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        im_data.resize_(data.size()).copy_(data)
    labels = torch.tensor([1, 2], device=im_data.device)
    loss = nn.functional.cross_entropy(FPN(im_data), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    torch.save({'session': args.session, 'epoch': 2, 'model': FPN.state_dict(),
                'optimizer': optimizer.state_dict()}, load_name)
    return output_dir


if __name__ == '__main__':
    flags = ['--cuda'] if torch.cuda.is_available() else []
    out = main(flags)
    main(flags + ['--r', 'True', '--save_dir', out])
    print("resumed")
