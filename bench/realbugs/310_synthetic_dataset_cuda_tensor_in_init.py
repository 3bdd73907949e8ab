# source: https://github.com/pytorch/pytorch/issues/40403
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: a synthetic benchmark dataset builds its image tensor on the GPU in __init__; DataLoader workers,
# forked from the training process that already uses CUDA, touch that tensor in __getitem__ and fail.
import random

import torch
import torch.nn as nn
import torch.utils.data as data
import torchvision


class DummyDataset(data.Dataset):
    def __init__(self, num_classes, length=10000):
        super(DummyDataset, self).__init__()
        # one synthetic image, kept on the GPU to skip the copy
        self.tensor = torch.randn(3, 224, 224, device=torch.device("cuda"))  # expect: DL312
        self.num_classes = num_classes
        self.length = length

    def __getitem__(self, index):
        torch.manual_seed(index)
        random.seed(index)
        return self.tensor, random.randint(0, self.num_classes - 1)

    def __len__(self):
        return self.length


def execute(local_rank, batch_size=64, workers=4):
    torch.cuda.set_device(local_rank)
    torch.distributed.init_process_group(backend="nccl")
    model = torchvision.models.resnet50().cuda()
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    criterion = nn.CrossEntropyLoss().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    train_dataset = DummyDataset(num_classes=1000)
    sampler = data.distributed.DistributedSampler(train_dataset)
    train_dataset_loader = data.DataLoader(train_dataset, batch_size=batch_size, sampler=sampler, num_workers=workers)
    for step, (images, class_targets) in enumerate(train_dataset_loader):
        loss = criterion(model(images), class_targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
