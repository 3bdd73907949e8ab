# source: https://github.com/samet-akcay/ganomaly/issues/26
# fixed twin: roc() copies the labels and scores to the host before scikit-learn's roc_curve (commit b0f894d).
import numpy as np
import torch
import torch.nn as nn


def roc_curve(y_true, y_score):
    y_true, y_score = np.asarray(y_true), np.asarray(y_score)
    order = np.argsort(-y_score)
    tps = np.cumsum(y_true[order] == 1)
    fps = np.cumsum(y_true[order] != 1)
    return fps / max(fps[-1], 1), tps / max(tps[-1], 1), y_score[order]


def auc(x, y):
    return float(np.trapz(y, x)) if hasattr(np, "trapz") else float(np.trapezoid(y, x))


def roc(labels, scores):
    labels = labels.cpu()
    scores = scores.cpu()
    fpr, tpr, _ = roc_curve(labels, scores)
    return auc(fpr, tpr)


def evaluate(labels, scores, metric="roc"):
    if metric == "roc":
        return roc(labels, scores)
    raise NotImplementedError(metric)


class NetG(nn.Module):
    def __init__(self, isize=8, nz=4):
        super().__init__()
        self.enc = nn.Linear(isize * isize, nz)
        self.dec = nn.Linear(nz, isize * isize)
        self.enc2 = nn.Linear(isize * isize, nz)

    def forward(self, x):
        x = x.flatten(1)
        latent_i = self.enc(x)
        fake = self.dec(latent_i)
        return fake, latent_i, self.enc2(fake)


class Ganomaly:
    def __init__(self, opt, dataloader):
        self.opt = opt
        self.dataloader = dataloader
        self.device = torch.device("cuda:0" if opt["device"] != "cpu" else "cpu")
        self.netg = NetG().to(self.device)

    def test(self):
        with torch.no_grad():
            n = sum(x.size(0) for x, _ in self.dataloader)
            self.an_scores = torch.zeros(size=(n,), dtype=torch.float32, device=self.device)
            self.gt_labels = torch.zeros(size=(n,), dtype=torch.long, device=self.device)
            start = 0
            for x, y in self.dataloader:
                x, y = x.to(self.device), y.to(self.device)
                _, latent_i, latent_o = self.netg(x)
                error = torch.mean(torch.pow((latent_i - latent_o), 2), dim=1)
                self.an_scores[start:start + error.size(0)] = error
                self.gt_labels[start:start + error.size(0)] = y
                start += error.size(0)
            self.an_scores = (self.an_scores - self.an_scores.min()) / (self.an_scores.max() - self.an_scores.min())
            return evaluate(self.gt_labels, self.an_scores, metric="roc")


if __name__ == "__main__":
    opt = {"device": "gpu" if torch.cuda.is_available() else "cpu"}
    loader = [(torch.randn(4, 8, 8), torch.randint(0, 2, (4,))) for _ in range(3)]
    print(round(Ganomaly(opt, loader).test(), 4))
