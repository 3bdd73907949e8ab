# source: https://github.com/nyu-mll/jiant/pull/776
# fixed twin: the identity matrix is moved to the GPU only when CUDA is available, as commit 2fb80e1 does.
import torch
import torch.nn as nn


class F1Measure:
    def __init__(self, positive_label=1):
        self.positive_label = positive_label
        self.tp = self.fp = self.fn = 0

    def __call__(self, one_hot_preds, labels):
        preds = one_hot_preds.argmax(dim=-1)
        pos = self.positive_label
        self.tp += int(((preds == pos) & (labels == pos)).sum())
        self.fp += int(((preds == pos) & (labels != pos)).sum())
        self.fn += int(((preds != pos) & (labels == pos)).sum())

    def get_metric(self):
        precision = self.tp / max(self.tp + self.fp, 1)
        recall = self.tp / max(self.tp + self.fn, 1)
        return 2 * precision * recall / max(precision + recall, 1e-8)


class SpanClassificationTask:
    def __init__(self):
        self.f1_scorer = F1Measure()
        self.acc_correct = 0
        self.acc_total = 0


class WinogradCoreferenceTask(SpanClassificationTask):
    def update_metrics(self, logits, labels, tagmask=None):
        logits, labels = logits.detach(), labels.detach()

        def make_one_hot(batch, depth=2):
            ones = torch.sparse.torch.eye(depth)
            if torch.cuda.is_available():
                ones = ones.cuda()
            return ones.index_select(0, batch)

        binary_preds = make_one_hot(logits.argmax(dim=-1), depth=2)
        self.f1_scorer(binary_preds, labels)
        self.acc_correct += int((binary_preds.argmax(dim=-1) == labels).sum())
        self.acc_total += labels.numel()


class SpanClassifierModule(nn.Module):
    def __init__(self, d_inp=16, n_classes=2):
        super().__init__()
        self.proj = nn.Linear(2 * d_inp, n_classes)

    def forward(self, span1, span2):
        return self.proj(torch.cat([span1, span2], dim=-1))


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    task = WinogradCoreferenceTask()
    model = SpanClassifierModule().to(device)
    with torch.no_grad():
        logits = model(torch.randn(8, 16, device=device), torch.randn(8, 16, device=device))
    task.update_metrics(logits, torch.randint(0, 2, (8,), device=device))
    print(task.f1_scorer.get_metric(), task.acc_correct / task.acc_total)
