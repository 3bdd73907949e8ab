# source: https://github.com/shenweichen/DeepCTR-Torch/issues/150
# fixed twin: only the state_dict is saved; the server rebuilds the model for the CPU and loads the weights into it (the thread's answer).
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class BaseModel(nn.Module):
    def __init__(self, n_features, device="cpu"):
        super().__init__()
        self.device = device
        self.n_features = n_features

    def fit(self, x, y, epochs=1, batch_size=8):
        loader = DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=True)
        optim = torch.optim.Adam(self.parameters(), lr=1e-2)
        loss_func = nn.BCELoss()
        model = self.train()
        for _ in range(epochs):
            for xb, yb in loader:
                xb, yb = xb.to(self.device).float(), yb.to(self.device).float()
                loss = loss_func(model(xb).squeeze(-1), yb)
                optim.zero_grad()
                loss.backward()
                optim.step()

    def predict(self, x, batch_size=16):
        model = self.eval()
        preds = []
        with torch.no_grad():
            for (xb,) in DataLoader(TensorDataset(x), batch_size=batch_size):
                xb = xb.to(self.device).float()
                preds.append(model(xb).cpu())
        return torch.cat(preds)


class DeepFM(BaseModel):
    def __init__(self, n_features, embedding_dim=4, device="cpu"):
        super().__init__(n_features, device=device)
        self.linear = nn.Linear(n_features, 1)
        self.v = nn.Parameter(torch.randn(n_features, embedding_dim) * 0.01)
        self.dnn = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.to(device)

    def forward(self, x):
        fm = 0.5 * ((x @ self.v) ** 2 - (x ** 2) @ (self.v ** 2)).sum(1, keepdim=True)
        return torch.sigmoid(self.linear(x) + fm + self.dnn(x))


def train_and_save(model_path, device):
    x, y = torch.rand(64, 6), torch.randint(0, 2, (64,))
    model = DeepFM(6, device=device)
    model.fit(x, y)
    torch.save(model.state_dict(), model_path)


def serve(model_path, x):
    model = DeepFM(6, device="cpu")
    model.load_state_dict(torch.load(model_path, map_location=torch.device("cpu")))
    return model.predict(x)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "deepfm.pt")
    train_device = "cuda:1" if torch.cuda.device_count() > 1 else "cpu"
    train_and_save(path, train_device)
    print(serve(path, torch.rand(5, 6)).shape)
