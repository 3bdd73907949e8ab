# source: https://github.com/pytorch/pytorch/issues/77159
# error: RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use the 'spawn' start method
# bug: a custom Dataset moves each sample to the GPU as the last step of __getitem__ so the training loop
# need not; with num_workers > 0 the forked workers cannot use CUDA, and teams fell back to num_workers=0.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class FeatureDataset(Dataset):
    def __init__(self, features: np.ndarray, labels: np.ndarray):
        self.features = features
        self.labels = labels

    def __len__(self):
        return len(self.features)

    def __getitem__(self, idx):
        x = torch.from_numpy(self.features[idx]).float()
        x = (x - x.mean()) / (x.std() + 1e-6)
        y = torch.tensor(self.labels[idx])
        # hand the model ready-to-use tensors
        return x.to(device), y.to(device)  # expect: DL312


def main():
    model = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    dataset = FeatureDataset(np.random.rand(1000, 128).astype(np.float32), np.random.randint(0, 10, 1000))
    loader = DataLoader(dataset, batch_size=32, shuffle=True, num_workers=4)
    for x, y in loader:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
