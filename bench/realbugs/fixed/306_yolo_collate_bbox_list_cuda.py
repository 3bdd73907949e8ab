# source: https://github.com/bubbliiiing/yolov4-pytorch/issues/357
# error: AttributeError: 'list' object has no attribute 'cuda'
# bug: after porting the YOLOv7 loss, the collate function returns the boxes as a list of per-image
# tensors, while the training step still moves targets with one .cuda(local_rank) call.
import numpy as np
import torch
from torch.utils.data import DataLoader


def yolo_dataset_collate(batch):
    images = []
    bboxes = []
    for i, (img, box) in enumerate(batch):
        images.append(img)
        box[:, 0] = i
        bboxes.append(box)
    images = torch.from_numpy(np.array(images)).type(torch.FloatTensor)
    bboxes = torch.from_numpy(np.concatenate(bboxes, 0)).type(torch.FloatTensor)
    return images, bboxes


def fit_one_epoch(model_train, yolo_loss, optimizer, gen, cuda, local_rank=0):
    model_train.train()
    for iteration, batch in enumerate(gen):
        images, targets = batch[0], batch[1]
        with torch.no_grad():
            if cuda:
                images = images.cuda(local_rank)
                targets = targets.cuda(local_rank)
        optimizer.zero_grad()
        outputs = model_train(images)
        loss_value = yolo_loss(outputs, targets, images)
        loss_value.backward()
        optimizer.step()


def make_loader(train_dataset, batch_size):
    return DataLoader(train_dataset, shuffle=True, batch_size=batch_size, num_workers=4, pin_memory=True,
                      drop_last=True, collate_fn=yolo_dataset_collate)
