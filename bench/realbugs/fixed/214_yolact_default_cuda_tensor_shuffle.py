# source: https://github.com/dbolya/yolact/issues/664
# error: RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'
# bug: train.py makes torch.cuda.FloatTensor the default tensor type, so the shuffling sampler's
#      randperm runs on the GPU while the DataLoader's default generator is a CPU one.
import argparse

import torch
import torch.utils.data as data
from data import COCODetection, cfg, detection_collate
from utils.augmentations import SSDAugmentation
from yolact import Yolact

parser = argparse.ArgumentParser(description='Yolact Training Script')
parser.add_argument('--batch_size', default=8, type=int)
parser.add_argument('--num_workers', default=4, type=int)
parser.add_argument('--cuda', default=True, type=bool)
parser.add_argument('--lr', default=1e-3, type=float)
args = parser.parse_args()

if torch.cuda.is_available():
    if args.cuda:
        torch.set_default_tensor_type('torch.cuda.FloatTensor')
    if not args.cuda:
        torch.set_default_tensor_type('torch.FloatTensor')
else:
    torch.set_default_tensor_type('torch.FloatTensor')


def train():
    dataset = COCODetection(image_path=cfg.dataset.train_images,
                            info_file=cfg.dataset.train_info,
                            transform=SSDAugmentation())
    net = Yolact()
    net.train()
    if args.cuda:
        net = net.cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)

    data_loader = data.DataLoader(dataset, args.batch_size,
                                  num_workers=args.num_workers,
                                  shuffle=True, collate_fn=detection_collate,
                                  pin_memory=True, generator=torch.Generator(device='cuda'))
    for epoch in range(cfg.max_iter // len(data_loader)):
        for datum in data_loader:
            images, (targets, masks, num_crowds) = datum
            images = torch.stack(images, 0).cuda()
            losses = net(images, [t.cuda() for t in targets], [m.cuda() for m in masks], num_crowds)
            loss = sum(losses[k] for k in losses)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == '__main__':
    train()
