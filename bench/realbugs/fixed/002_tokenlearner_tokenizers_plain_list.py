# source: https://github.com/rish-16/tokenlearner-pytorch/issues/4
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: TokenLearner keeps its SpatialAttention submodules in a plain Python list, so model.cuda()
#      never moves their conv/batch-norm weights and the CUDA input meets CPU weights.
import torch
import torch.nn as nn


class SpatialAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(2, 1, kernel_size=(1, 1), stride=1),
            nn.BatchNorm2d(1),
            nn.ReLU(),
        )

    def forward(self, x):
        B, H, W, C = x.shape
        x = x.view(B, C, H, W)
        mx = torch.max(x, 1)[0].unsqueeze(1)
        avg = torch.mean(x, 1).unsqueeze(1)
        weight_map = torch.sigmoid(self.conv(torch.cat([mx, avg], dim=1)))
        out = (x * weight_map).mean(dim=(-2, -1))
        return out, x * weight_map


class TokenLearner(nn.Module):
    def __init__(self, S):
        super().__init__()
        self.S = S
        self.tokenizers = nn.ModuleList([SpatialAttention() for _ in range(S)])

    def forward(self, x):
        tokens = []
        for i in range(self.S):
            Ai, _ = self.tokenizers[i](x)
            tokens.append(Ai)
        return torch.stack(tokens, dim=1)


model = TokenLearner(S=8).cuda()
out = model(torch.randn(2, 32, 32, 3).cuda())
