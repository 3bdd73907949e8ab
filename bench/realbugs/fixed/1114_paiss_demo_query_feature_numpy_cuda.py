# source: https://github.com/almazan/paiss/issues/4
# fixed twin: the query representation is copied to the host before .numpy(), as the reporter's fix does.
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResNetRankDA(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, dim, 3, stride=2, padding=1), nn.ReLU())
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_max_pool2d(x, 1).flatten(1)
        return F.normalize(self.fc(x), dim=-1)


def resnet50_rank_DA():
    return ResNetRankDA()


class OxfordDataset:
    def __init__(self, n=20, dim=16):
        rng = np.random.default_rng(0)
        feats = rng.standard_normal((n, dim)).astype(np.float32)
        self.d_feats = feats / np.linalg.norm(feats, axis=1, keepdims=True)

    def get_query_image(self, qidx):
        return torch.rand(3, 40, 40)

    def vis_top(self, d_feats, qidx, q_feat, topk=5):
        scores = np.dot(d_feats, q_feat.T).ravel()
        return np.argsort(-scores)[:topk]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Demo")
    parser.add_argument("--qidx", type=int, default=0)
    parser.add_argument("--topk", type=int, default=5)
    args = parser.parse_args()
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    dataset = OxfordDataset()
    model = resnet50_rank_DA().to(device)
    model.eval()
    d_feats = dataset.d_feats
    I = dataset.get_query_image(args.qidx)
    I = (I - 0.45) / 0.225
    I = I.unsqueeze(0).to(device)
    with torch.no_grad():
        q_feat = model(I).cpu().numpy()
    print(dataset.vis_top(d_feats, args.qidx, q_feat=q_feat, topk=args.topk))
