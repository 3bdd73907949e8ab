# source: https://github.com/robustness-gym/robustness-gym/pull/39
# fixed twin: compute_metric copies tensor predictions and labels to the CPU before the numpy-based metrics, as commit e646ee8 does (numpy needed to run it).
import numpy as np
import torch
import torch.nn as nn


def accuracy_score(y_true, y_pred):
    return float((np.asarray(y_true) == np.asarray(y_pred)).mean())


def f1_score(y_true, y_pred, average="macro"):
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    scores = []
    for c in np.unique(y_true):
        tp = np.sum((y_pred == c) & (y_true == c))
        denom = np.sum(y_pred == c) + np.sum(y_true == c)
        scores.append(2.0 * tp / denom if denom else 0.0)
    return float(np.mean(scores))


def accuracy(predictions, labels):
    return accuracy_score(y_true=labels, y_pred=predictions)


def f1_macro(predictions, labels):
    return f1_score(y_true=labels, y_pred=predictions, average="macro")


def compute_metric(metric, predictions, labels, num_classes):
    if isinstance(predictions, torch.Tensor):
        predictions = predictions.cpu()
    if isinstance(labels, torch.Tensor):
        labels = labels.cpu()
    if metric == "accuracy":
        return accuracy(predictions=predictions, labels=labels)
    elif metric == "f1_macro":
        return f1_macro(predictions=predictions, labels=labels)
    elif metric == "pred_dist":
        return torch.bincount(predictions, minlength=num_classes).float() / len(predictions)
    raise NotImplementedError(metric)


class Model:
    def __init__(self, model, device=None):
        self.device = device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu")
        self.model = model.to(self.device)

    def predict_batch(self, batch):
        with torch.no_grad():
            logits = self.model(batch["features"].to(self.device))
        return {"logits": logits, "pred": logits.argmax(dim=-1)}

    def evaluate(self, dataset, batch_size=16, metrics=("accuracy", "f1_macro"), num_classes=3):
        predictions, targets = [], []
        for idx in range(0, len(dataset["label"]), batch_size):
            batch = {k: v[idx : idx + batch_size] for k, v in dataset.items()}
            predictions.append(self.predict_batch(batch)["pred"])
            targets.append(torch.tensor(batch["label"]))
        predictions = torch.cat(predictions).to("cpu")
        labels = torch.cat(targets).to("cpu")

        pred = predictions.to(self.device)
        target = labels.to(self.device)
        return {metric: compute_metric(metric, pred, target, num_classes) for metric in metrics}


if __name__ == "__main__":
    dataset = {"features": torch.randn(40, 5), "label": torch.randint(0, 3, (40,)).tolist()}
    wrapper = Model(nn.Linear(5, 3))
    print(wrapper.evaluate(dataset))
