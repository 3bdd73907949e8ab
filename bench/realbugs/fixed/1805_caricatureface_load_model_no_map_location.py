# source: https://github.com/Juyong/CaricatureFace/issues/2
# fixed twin: both checkpoints are loaded with map_location (the maintainer's 'cuda:0'; the CPU where CUDA is unavailable, so the twin runs here).
import os
import tempfile

import torch
import torch.nn as nn


class LandmarkNet(nn.Module):
    def __init__(self, n_points=68):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(8, n_points * 2)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


class ShapeNet(nn.Module):
    def __init__(self, n_points=68, n_coeffs=20):
        super().__init__()
        self.fc = nn.Linear(n_points * 2, n_coeffs)

    def forward(self, landmarks):
        return self.fc(landmarks)


class CariFace:
    def __init__(self, device):
        self.device = device
        self.model1 = LandmarkNet()
        self.model2 = ShapeNet()

    def load_model(self, model1_path, model2_path):
        ck1 = torch.load(model1_path, map_location=self.device)
        ck2 = torch.load(model2_path, map_location=self.device)
        self.model1.load_state_dict(ck1["state_dict"])
        self.model2.load_state_dict(ck2["state_dict"])
        self.model1.to(self.device).eval()
        self.model2.to(self.device).eval()

    def reconstruct(self, images):
        with torch.no_grad():
            return self.model2(self.model1(images.to(self.device)))


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    p1, p2 = os.path.join(folder, "model1.pth"), os.path.join(folder, "model2.pth")
    torch.save({"state_dict": LandmarkNet().state_dict()}, p1)
    torch.save({"state_dict": ShapeNet().state_dict()}, p2)
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    face = CariFace(device)
    face.load_model(p1, p2)
    print(face.reconstruct(torch.randn(2, 3, 32, 32)).shape)
