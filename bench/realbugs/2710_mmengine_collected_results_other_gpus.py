# source: https://github.com/open-mmlab/mmengine/pull/385
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!
#        (computing the metrics on rank 0 from the results every rank collected)
# bug: each rank's metric stores the GPU tensors of its predictions and labels in self.results; evaluate() gathers
#      the results of all ranks on the main process, and unpickled tensors keep the device they were saved from, so
#      rank 0 hands compute_metrics a list holding tensors on cuda:0, cuda:1, ... which it concatenates. The merged fix
#      (commit 4432e54) casts every collected tensor to the CPU before compute_metrics; it inserts a line, so the
#      compute_metrics call it precedes is marked (DL201: tensors from different devices combined; the closest rule).
import io
from abc import ABCMeta, abstractmethod

import torch


def rank_device(rank):
    return torch.device(f"cuda:{rank}") if torch.cuda.device_count() > rank else torch.device("cpu")


def collect_results(per_rank_results, size):
    """Gathers pickled result lists of every rank (as the CPU collect does) and interleaves them."""
    gathered = []
    for results in per_rank_results:
        buf = io.BytesIO()
        torch.save(results, buf)
        buf.seek(0)
        gathered.append(torch.load(buf, weights_only=False))
    ordered = [r for group in zip(*gathered) for r in group]
    return ordered[:size]


class BaseMetric(metaclass=ABCMeta):
    def __init__(self, prefix=None):
        self.results = []
        self.prefix = prefix

    @abstractmethod
    def process(self, data_batch, predictions):
        ...

    @abstractmethod
    def compute_metrics(self, results):
        ...

    def evaluate(self, all_rank_results, size, is_main_process=True):
        results = collect_results(all_rank_results, size)
        if is_main_process:
            _metrics = self.compute_metrics(results)  # expect: DL201
            if self.prefix:
                _metrics = {"/".join((self.prefix, k)): v for k, v in _metrics.items()}
            metrics = [_metrics]
        else:
            metrics = [None]
        self.results.clear()
        return metrics[0]


class Accuracy(BaseMetric):
    def process(self, data_batch, predictions):
        for data, pred in zip(data_batch, predictions):
            self.results.append({"pred": pred["pred"], "label": data["label"]})

    def compute_metrics(self, results):
        preds = torch.cat([r["pred"] for r in results])
        labels = torch.cat([r["label"] for r in results])
        return {"accuracy": (preds == labels).float().mean().item()}


def run_rank(rank, num_batches=5):
    device = rank_device(rank)
    model = torch.nn.Linear(4, 3).to(device)
    metric = Accuracy(prefix="val")
    for _ in range(num_batches):
        inputs = torch.randn(2, 4, device=device)
        labels = torch.randint(0, 3, (2,), device=device)
        preds = model(inputs).argmax(dim=1)
        metric.process([{"label": labels}], [{"pred": preds}])
    return metric


if __name__ == "__main__":
    metrics = [run_rank(rank) for rank in range(2)]
    print(metrics[0].evaluate([m.results for m in metrics], size=10))
