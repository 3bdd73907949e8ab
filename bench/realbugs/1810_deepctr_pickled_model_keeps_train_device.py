# source: https://github.com/shenweichen/DeepCTR-Torch/issues/150
# error: after torch.load(model_path, map_location=torch.device("cpu")) the model's device still reads "cuda:1"; prediction on the CPU-only server moves its inputs to cuda:1 and fails
# bug: the CTR model keeps the device it was built for as a plain attribute and predict() moves
#      every input batch to self.device. The user trained on cuda:1, saved the WHOLE model object
#      with torch.save(model, path) and restored it on a CPU server with map_location: the weights
#      land on the CPU but the pickled attribute still says cuda:1. The fix from the thread (the
#      reporter confirmed it): save only the state_dict, rebuild the model for the CPU and load the
#      weights into it; the changed save and load lines are marked. No rule covers a device
#      attribute restored by unpickling; DL301 (a load that restores the device the object was
#      saved from) is the closest, a stretch since this load has a map_location.
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
    torch.save(model, model_path)  # expect: DL301


def serve(model_path, x):
    model = torch.load(model_path, map_location=torch.device("cpu"), weights_only=False)  # expect: DL301
    return model.predict(x)


if __name__ == "__main__":
    path = os.path.join(tempfile.mkdtemp(), "deepfm.pt")
    train_device = "cuda:1" if torch.cuda.device_count() > 1 else "cpu"
    train_and_save(path, train_device)
    print(serve(path, torch.rand(5, 6)).shape)
