# source: https://github.com/mozilla/TTS/pull/635
# error: device mismatch when continuing WaveGrad training from a checkpoint (issue #622)
# bug: the training script builds the Adam optimizer and restores its state (checkpoint loaded to the
#      CPU) while the model is still on the CPU, and only then calls model.cuda(); the restored
#      optimizer state stays on the CPU while the parameters and gradients move to the GPU.
import argparse

import torch
from torch.optim import Adam
from TTS.vocoder.utils.generic_utils import setup_generator
from TTS.utils.io import load_config


def train(model, criterion, optimizer, scheduler, loader, use_cuda):
    model.train()
    for x, m in loader:
        if use_cuda:
            x, m = x.cuda(non_blocking=True), m.cuda(non_blocking=True)
        noise, x_noisy, noise_scale = model.compute_y_n(x)
        noise_hat = model(x_noisy, m, noise_scale)
        loss = criterion(noise, noise_hat)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()


def main(args, c, loader):
    use_cuda = torch.cuda.is_available()
    model = setup_generator(c)

    optimizer = Adam(model.parameters(), lr=c.lr, weight_decay=0)  # expect: DL407
    scheduler = None
    if 'lr_scheduler' in c:
        scheduler = getattr(torch.optim.lr_scheduler, c.lr_scheduler)
        scheduler = scheduler(optimizer, **c.lr_scheduler_params)

    criterion = torch.nn.L1Loss().cuda()

    if args.restore_path:
        checkpoint = torch.load(args.restore_path, map_location='cpu')
        model.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        if 'scheduler' in checkpoint:
            scheduler.load_state_dict(checkpoint['scheduler'])
            scheduler.optimizer = optimizer
        for group in optimizer.param_groups:
            group['lr'] = c.lr

    if use_cuda:
        model.cuda()
        criterion.cuda()

    for epoch in range(0, c.epochs):
        train(model, criterion, optimizer, scheduler, loader, use_cuda)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--config_path', type=str)
    parser.add_argument('--restore_path', type=str, default='')
    args = parser.parse_args()
    main(args, load_config(args.config_path), loader=[])
