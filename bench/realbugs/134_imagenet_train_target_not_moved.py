# source: https://github.com/pytorch/examples/pull/1073
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu (issue #1071)
# bug: train() moves only the images when --gpu is given (and only the target otherwise), so with a
#      GPU id the CUDA model output meets a CPU target in the criterion and in accuracy().
import argparse

import torch
import torch.nn as nn
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.models as models
import torchvision.transforms as transforms


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0, keepdim=True) for k in topk]


def train(train_loader, model, criterion, optimizer, epoch, args):
    model.train()
    for i, (images, target) in enumerate(train_loader):
        if args.gpu is not None and torch.cuda.is_available():
            images = images.cuda(args.gpu, non_blocking=True)
        elif not args.gpu and torch.cuda.is_available():
            target = target.cuda(args.gpu, non_blocking=True)
        elif torch.backends.mps.is_available():
            images = images.to('mps')
            target = target.to('mps')

        output = model(images)
        loss = criterion(output, target)  # expect: DL201
        acc1, acc5 = accuracy(output, target, topk=(1, 5))

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main_worker(gpu, args):
    args.gpu = gpu
    model = models.__dict__[args.arch]()
    if args.gpu is not None and torch.cuda.is_available():
        torch.cuda.set_device(args.gpu)
        model = model.cuda(args.gpu)
    else:
        model = torch.nn.DataParallel(model).cuda()

    if torch.cuda.is_available():
        if args.gpu:
            device = torch.device('cuda:{}'.format(args.gpu))
        else:
            device = torch.device("cuda")
    else:
        device = torch.device("cpu")
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=1e-4)

    train_dataset = datasets.ImageFolder(args.data, transforms.Compose([
        transforms.RandomResizedCrop(224), transforms.ToTensor()]))
    train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size,
                                               shuffle=True, num_workers=4, pin_memory=True)
    for epoch in range(args.epochs):
        train(train_loader, model, criterion, optimizer, epoch, args)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('data')
    parser.add_argument('-a', '--arch', default='resnet18')
    parser.add_argument('--gpu', default=None, type=int)
    parser.add_argument('--lr', default=0.1, type=float)
    parser.add_argument('-b', '--batch-size', default=256, type=int)
    parser.add_argument('--epochs', default=90, type=int)
    args = parser.parse_args()
    main_worker(args.gpu, args)
