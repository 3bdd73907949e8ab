# source: https://github.com/GarrettJenkinson/condor_pytorch/pull/2
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (torch.cat)
# bug: the ordinal-regression loss shifts the extended binary labels one column right by
#      concatenating a column of ones made with torch.ones((n, 1)) and no device; when the model and
#      the label levels are on the GPU the concatenation mixes devices. The fix (commit 444e098) gives
#      that factory device=labels.device (the marked line, DL202); the same commit also passes the
#      logits' device to zeros_like, which already follows its argument (not marked).
import torch
import torch.nn as nn


def levels_from_labelbatch(labels, num_classes):
    levels = []
    for label in labels.tolist():
        levels.append([1.0] * label + [0.0] * (num_classes - 1 - label))
    return torch.tensor(levels, dtype=torch.float32)


def condor_negloglikeloss(logits, labels, reduction="mean"):
    if logits.shape != labels.shape:
        raise ValueError("logits and labels differ in shape")
    pi_lab = torch.cat([torch.ones((labels.shape[0], 1)), labels[:, :-1]], dim=1)  # expect: DL202
    zeros = torch.zeros_like(logits, dtype=logits.dtype)
    cond = logits >= zeros
    cond2 = pi_lab > zeros
    relu_logits = torch.where(cond, logits, zeros)
    neg_abs_logits = torch.where(cond, -logits, logits)
    temp = relu_logits - logits * labels + torch.log1p(torch.exp(neg_abs_logits))
    val = torch.sum(torch.where(cond2, temp, zeros), dim=1)
    if reduction == "mean":
        return val.mean()
    if reduction == "sum":
        return val.sum()
    return val


class OrdinalNet(nn.Module):
    def __init__(self, n_features, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU())
        self.out = nn.Linear(16, num_classes - 1)

    def forward(self, x):
        return self.out(self.body(x))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    num_classes = 5
    model = OrdinalNet(10, num_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        features = torch.randn(16, 10)
        labels = torch.randint(0, num_classes, (16,))
        features = features.to(device)
        levels = levels_from_labelbatch(labels, num_classes).to(device)
        loss = condor_negloglikeloss(model(features), levels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(loss.item())
