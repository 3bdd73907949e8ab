# source: https://github.com/JonasGeiping/breaching/pull/18
# fixed twin: dump_metrics copies CUDA tensor values to the CPU before np.asarray, as the PR describes (numpy needed to run it).
import json
import os
import tempfile

import numpy as np
import torch


def compute_batch_order(rec, truth, setup):
    distances = torch.cdist(truth.flatten(1), rec.flatten(1))
    assignment = []
    taken = set()
    for row in distances.cpu().tolist():
        best = min((d, j) for j, d in enumerate(row) if j not in taken)[1]
        taken.add(best)
        assignment.append(best)
    return torch.as_tensor(assignment, device=setup["device"], dtype=torch.long)


def run_vision_metrics(reconstructed, truth, setup):
    rec = torch.clamp(reconstructed["data"].to(**setup), 0, 1)
    gt = torch.clamp(truth["data"].to(**setup), 0, 1)
    order = compute_batch_order(rec, gt, setup)
    rec = rec[order]
    mse_score = (rec - gt).pow(2).mean(dim=[1, 2, 3])
    psnr = 10 * torch.log10(1 / mse_score)
    return dict(mse=mse_score.mean().item(), psnr=psnr.mean().item(), max_psnr=psnr.max().item(), order=order)


def report(reconstructed, truth, setup):
    metrics = run_vision_metrics(reconstructed, truth, setup)
    label_acc = (reconstructed["labels"] == truth["labels"]).float().mean().item()
    return dict(**metrics, label_acc=label_acc)


def dump_metrics(out_dir, metrics):
    filepath = os.path.join(out_dir, "metrics_user0.json")
    sanitized_metrics = dict()
    for metric, val in metrics.items():
        if isinstance(val, torch.Tensor) and val.is_cuda:
            val = val.cpu()
        try:
            sanitized_metrics[metric] = np.asarray(val).item()
        except ValueError:
            sanitized_metrics[metric] = np.asarray(val).tolist()
    with open(filepath, "w") as handle:
        json.dump(sanitized_metrics, handle)
    return filepath


if __name__ == "__main__":
    setup = dict(device=torch.device("cuda" if torch.cuda.is_available() else "cpu"), dtype=torch.float)
    truth = {"data": torch.rand(4, 3, 8, 8), "labels": torch.tensor([1, 2, 3, 4])}
    reconstructed = {"data": truth["data"][[2, 0, 3, 1]] + 0.05 * torch.randn(4, 3, 8, 8), "labels": truth["labels"]}
    metrics = report(reconstructed, truth, setup)
    print(open(dump_metrics(tempfile.mkdtemp(), metrics)).read())
