# source: https://github.com/matssteinweg/PIXOR/issues/2
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the evaluation script builds its test set with device=cuda (the dataset creates the voxel grids
#      directly on that device) but the PIXOR network is only given weights (map_location=device) and
#      is never moved, so evaluate_model feeds CUDA batches to a CPU model.
import os

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import kitti_utils
from PIXOR import PIXOR


class PointCloudDataset(Dataset):
    def __init__(self, root_dir, split='testing', device=torch.device('cpu')):
        self.device = device
        self.lidar_dir = os.path.join(root_dir, split, 'velodyne')
        self.num_samples = 1000

    def __len__(self):
        return self.num_samples

    def __getitem__(self, index):
        lidar_data = kitti_utils.load_velo_scan(os.path.join(self.lidar_dir, '%06d.bin' % index))
        voxel_point_cloud = torch.tensor(kitti_utils.voxelize(point_cloud=lidar_data), device=self.device).float()
        return voxel_point_cloud.permute([2, 0, 1])


def load_dataset(root, batch_size=1, device=torch.device('cpu')):
    test_dataset = PointCloudDataset(root_dir=root, device=device)
    return DataLoader(test_dataset, batch_size=batch_size, shuffle=False, num_workers=0, drop_last=True)


def evaluate_model(model, data_loader):
    model.eval()
    for batch_id, batch_data in enumerate(data_loader):
        with torch.set_grad_enabled(False):
            batch_predictions = model(batch_data)  # expect: DL201
            batch_predictions = batch_predictions.permute([0, 2, 3, 1])
            print(batch_id, batch_predictions.shape)


if __name__ == '__main__':
    device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
    data_loader = load_dataset(root='kitti/object/', batch_size=1, device=device)

    pixor = PIXOR()
    pixor.load_state_dict(torch.load('Models/PIXOR_Epoch_15.pt', map_location=device))

    evaluate_model(pixor, data_loader)
