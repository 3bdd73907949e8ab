# source: https://github.com/NVIDIA/MinkowskiEngine/issues/474
# error: TypeError: 'bool' object is not callable (sparse_quantize called with torch tensors and labels, from a
#        Dataset's __getitem__)
# bug: sparse_quantize checks that label quantization gets host tensors with `not discrete_coordinates.is_cuda()`;
#      is_cuda is a property, so every call with torch coordinates and labels raises before quantizing. The fixed
#      quantization.py reads the property, `not discrete_coordinates.is_cuda` (DL305: a device property called).
import torch
from torch.utils.data import DataLoader, Dataset


def _quantize_label(coords, labels, ignore_label):
    unique_coords, inverse = torch.unique(coords, dim=0, return_inverse=True)
    unique_map = torch.zeros(unique_coords.shape[0], dtype=torch.long)
    unique_map.scatter_(0, inverse, torch.arange(coords.shape[0]))
    colabels = torch.full((unique_coords.shape[0],), ignore_label, dtype=labels.dtype)
    for i in range(unique_coords.shape[0]):
        point_labels = labels[inverse == i]
        if (point_labels == point_labels[0]).all():
            colabels[i] = point_labels[0]
    return unique_map, inverse, colabels


def sparse_quantize(coordinates, features=None, labels=None, ignore_label=-100, quantization_size=None):
    use_label = labels is not None
    use_feat = features is not None
    if quantization_size is not None:
        discrete_coordinates = torch.floor(coordinates / quantization_size).int()
    else:
        discrete_coordinates = torch.floor(coordinates).int()
    if use_label:
        assert not discrete_coordinates.is_cuda(), "Quantization with label requires cpu tensors."  # expect: DL305
        assert not labels.is_cuda, "Quantization with label requires cpu tensors."
        unique_map, inverse_map, colabels = _quantize_label(discrete_coordinates, labels, ignore_label)
        return_args = [discrete_coordinates[unique_map]]
        if use_feat:
            return_args.append(features[unique_map])
        return_args.append(colabels)
        return tuple(return_args)
    unique_coords, inverse = torch.unique(discrete_coordinates, dim=0, return_inverse=True)
    return unique_coords, inverse


class PointCloudDataset(Dataset):
    def __init__(self, n_clouds=4, n_points=64, voxel_size=0.5):
        self.n_clouds, self.n_points, self.voxel_size = n_clouds, n_points, voxel_size

    def __len__(self):
        return self.n_clouds

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        coords = torch.rand(self.n_points, 3, generator=g) * 4
        feats = torch.rand(self.n_points, 2, generator=g)
        labels = torch.randint(0, 5, (self.n_points,), generator=g)
        return sparse_quantize(coords, feats, labels, quantization_size=self.voxel_size)


if __name__ == "__main__":
    loader = DataLoader(PointCloudDataset(), batch_size=1, collate_fn=lambda batch: batch[0])
    for coords, feats, labels in loader:
        print(coords.shape, feats.shape, labels.shape)
