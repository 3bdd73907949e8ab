# source: https://github.com/DashAISoftware/dashAI/pull/679
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: the image classifiers keep self.device (CUDA when available); train() builds the backbone there,
#      but load() restores a saved checkpoint with map_location="cpu" and rebuilds the backbone on the
#      CPU, while predict() moves only the images to self.device. Predicting with a loaded model in a
#      fresh process on a GPU machine fails. The PR adds self.model.to(self.device) in predict() before
#      the loop; it only inserts that line, so the model call the traceback points to is marked
#      (DL201: a module called on an argument on another device).
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class ImageDataset(Dataset):
    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return (self.images[idx] - 0.5) / 0.25


class CNNImageClassifier:
    def __init__(self, epochs=1, batch_size=4, num_classes=3):
        self.epochs, self.batch_size, self.num_classes = epochs, batch_size, num_classes
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = None

    def _build_backbone(self):
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, self.num_classes))

    def train(self, images, labels):
        self.model = self._build_backbone().to(self.device)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        criterion = nn.CrossEntropyLoss()
        self.model.train()
        for _ in range(self.epochs):
            for x, y in DataLoader(list(zip(images, labels)), batch_size=self.batch_size):
                x, y = x.to(self.device), y.to(self.device)
                optimizer.zero_grad()
                criterion(self.model(x), y).backward()
                optimizer.step()
        return self

    def predict(self, images):
        loader = DataLoader(ImageDataset(images), batch_size=self.batch_size, shuffle=False)
        self.model.eval()
        all_probs = []
        with torch.no_grad():
            for batch in loader:
                logits = self.model(batch.to(self.device))  # expect: DL201
                all_probs.append(torch.softmax(logits, dim=1).cpu())
        return torch.cat(all_probs)

    def save(self, filename):
        torch.save({"model_state_dict": self.model.state_dict(), "num_classes": self.num_classes}, filename)

    @classmethod
    def load(cls, filename):
        ckpt = torch.load(filename, map_location=torch.device("cpu"))
        instance = cls(num_classes=ckpt["num_classes"])
        instance.model = instance._build_backbone()
        instance.model.load_state_dict(ckpt["model_state_dict"])
        return instance


if __name__ == "__main__":
    images = [torch.rand(3, 16, 16) for _ in range(8)]
    labels = [i % 3 for i in range(8)]
    path = os.path.join(tempfile.mkdtemp(), "classifier.pt")
    CNNImageClassifier().train(images, labels).save(path)
    loaded = CNNImageClassifier.load(path)
    print(loaded.predict(images).shape)
