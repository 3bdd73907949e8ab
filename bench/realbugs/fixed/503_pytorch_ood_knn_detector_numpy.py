# source: https://github.com/kkirchheim/pytorch-ood/pull/27
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the KNN out-of-distribution detector embeds inputs with the (GPU) model and hands the
#      embeddings to scikit-learn's nearest-neighbour search with .detach().numpy(), which fails for
#      CUDA embeddings. The fix copies them to the host first.
import torch
import torch.nn as nn
from sklearn.neighbors import NearestNeighbors


class KNN:
    def __init__(self, model: nn.Module, n_neighbors=1):
        self.model = model
        self.knn = NearestNeighbors(n_neighbors=n_neighbors)
        self._is_fitted = False

    def fit(self, loader, device="cpu"):
        feats = []
        with torch.no_grad():
            for x, _ in loader:
                feats.append(self.model(x.to(device)).cpu())
        self.knn.fit(torch.cat(feats).numpy())
        self._is_fitted = True
        return self

    def predict_features(self, z: torch.Tensor) -> torch.Tensor:
        if not self._is_fitted:
            raise RuntimeError("fit first")
        dist, idx = self.knn.kneighbors(z.detach().cpu().numpy(), n_neighbors=1, return_distance=True)
        return torch.tensor(dist)

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        return self.predict_features(self.model(x))


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Flatten(), nn.Linear(32, 8)).to(device).eval()
    data = [(torch.randn(16, 32), torch.zeros(16)) for _ in range(3)]
    detector = KNN(model).fit(data, device=device)
    print(detector.predict(torch.randn(4, 32, device=device)).shape)
