# source: https://github.com/cvpr-vand/challenge/pull/4
# fixed twin: the labels and masks are moved to the device, as the PR does.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class AnomalyDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return {"image": torch.randn(3, 32, 32), "label": torch.tensor(idx % 2), "mask": torch.zeros(32, 32)}


class ScoreModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, image):
        anomaly_map = torch.sigmoid(self.head(image)).squeeze(1)
        return anomaly_map, anomaly_map.flatten(1).max(dim=1).values


def evaluate(model, loader, device):
    correct, pixel_error = 0.0, 0.0
    for batch in loader:
        image = batch["image"].to(device)
        label, mask = batch["label"].to(device), batch["mask"].to(device)
        anomaly_map, pred_score = model(image)
        correct += ((pred_score > 0.5).long() == label).float().sum()
        pixel_error += (anomaly_map - mask).abs().mean()
    return correct / len(loader.dataset), pixel_error / len(loader)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ScoreModel().to(device).eval()
    with torch.no_grad():
        print(evaluate(model, DataLoader(AnomalyDataset(), batch_size=4), device))
