# source: https://github.com/fastai/fastai/issues/1939
# error: RuntimeError: Expected object of backend CUDA but got backend CPU for sequence element 1 in sequence argument
#        at position #1 'tensors' (auc_roc_score as a metric of a tabular learner on the GPU, end of the first epoch)
# bug: roc_curve builds helper index tensors with the typed constructor LongTensor([...]), which always lives on the
#      CPU, and concatenates them with indices and counts computed from the GPU predictions. The fix for this report
#      moved the threshold index to targ.device (first marker); the two zero prefixes concatenated to fps/tps failed
#      the same way and were fixed later by fastai PR#2421 (fps.new_zeros(1)), the other two markers. DL202: a tensor
#      made without a device meets tensors computed from the argument.
import torch
import torch.nn as nn
from torch import LongTensor


def roc_curve(input, targ):
    targ = targ == 1
    desc_score_indices = torch.flip(input.argsort(-1), [-1])
    input = input[desc_score_indices]
    targ = targ[desc_score_indices]
    d = input[1:] - input[:-1]
    distinct_value_indices = torch.nonzero(d).transpose(0, 1)[0]
    threshold_idxs = torch.cat((distinct_value_indices, LongTensor([len(targ) - 1])))  # expect: DL202
    tps = torch.cumsum(targ * 1, dim=-1)[threshold_idxs]
    fps = 1 + threshold_idxs - tps
    if tps[0] != 0 or fps[0] != 0:
        fps = torch.cat((LongTensor([0]), fps))  # expect: DL202
        tps = torch.cat((LongTensor([0]), tps))  # expect: DL202
    fpr, tpr = fps.float() / fps[-1], tps.float() / tps[-1]
    return fpr, tpr


def auc_roc_score(input, targ):
    fpr, tpr = roc_curve(input, targ)
    d = fpr[1:] - fpr[:-1]
    sl1, sl2 = [slice(None)], [slice(None)]
    sl1[-1], sl2[-1] = slice(1, len(fpr)), slice(0, -1)
    return (d * (tpr[tuple(sl1)] + tpr[tuple(sl2)]) / 2.0).sum(-1)


def accuracy(input, targ):
    return (input.argmax(-1) == targ).float().mean()


class TabularModel(nn.Module):
    def __init__(self, n_cont, layers=(20, 10), out_sz=2):
        super().__init__()
        sizes = [n_cont, *layers]
        mods = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            mods += [nn.Linear(a, b), nn.ReLU()]
        self.layers = nn.Sequential(*mods, nn.Linear(sizes[-1], out_sz))

    def forward(self, x_cont):
        return self.layers(x_cont)


def validate(model, batches, metrics, device):
    model.eval()
    preds, targs = [], []
    with torch.no_grad():
        for xb, yb in batches:
            xb, yb = xb.to(device), yb.to(device)
            preds.append(model(xb))
            targs.append(yb)
    preds, targs = torch.cat(preds), torch.cat(targs)
    results = {}
    for metric in metrics:
        if metric is auc_roc_score:
            results[metric.__name__] = metric(torch.softmax(preds, -1)[:, 1], targs).item()
        else:
            results[metric.__name__] = metric(preds, targs).item()
    return results


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TabularModel(6).to(device)
    batches = [(torch.randn(16, 6), torch.randint(0, 2, (16,))) for _ in range(3)]
    print(validate(model, batches, [accuracy, auc_roc_score], device))
