# source: https://github.com/cfzd/Ultra-Fast-Lane-Detection-v2/issues/160
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: a custom lane dataset calls the project's CUDA-only interpolation op (my_interp) in __getitem__ and
# moves the lane points to the GPU there with .cuda(); the DataLoader's forked workers cannot use CUDA.
import json

import cv2
import my_interp
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class MyLaneDataset(Dataset):
    def __init__(self, root, list_path, row_anchor, transform=None):
        self.root = root
        with open(list_path) as f:
            self.items = [json.loads(line) for line in f]
        self.row_anchor = np.array(row_anchor, dtype=np.float32)
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        item = self.items[index]
        img = cv2.imread(f"{self.root}/{item['image']}")
        lanes = np.array(item["lanes"], dtype=np.float32)  # (num_lanes, num_points, 2)
        data = torch.from_numpy(lanes).cuda()  # expect: DL312
        anchors = torch.from_numpy(self.row_anchor).cuda()  # expect: DL312
        # resample every lane at the row anchors; the op only accepts CUDA tensors
        label = my_interp.run(data, anchors, 0)
        if self.transform is not None:
            img = self.transform(img)
        return img, label.cpu()


def get_train_loader(root, list_path, row_anchor, batch_size, workers=8):
    dataset = MyLaneDataset(root, list_path, row_anchor)
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=workers)
