# source: https://github.com/huggingface/setfit/issues/339
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: with the differentiable (torch) head the model lives on the GPU and predict() returns the label
#      tensor where the head computed it; the trainer's evaluate() hands that tensor to the user's
#      metric function, which calls .numpy() on it (the scikit-learn head returns numpy arrays, so the
#      same metric worked before). The fix (PR 363, following the discussion in the issue) makes
#      evaluate() move a tensor y_pred to the CPU before calling the metric; the marker is on the
#      .numpy() call the traceback points to (DL204). numpy must be installed to run it.
import torch
import torch.nn as nn


class Body(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, dim)

    def encode(self, texts):
        device = next(self.parameters()).device
        feats = torch.stack([torch.tensor([float(ord(c) % 7) for c in (t * self.dim)[: self.dim]]) for t in texts])
        return self.proj(feats.to(device))


class SetFitHead(nn.Module):
    def __init__(self, dim=8, out_features=3):
        super().__init__()
        self.linear = nn.Linear(dim, out_features)

    def predict(self, embeddings):
        return (torch.sigmoid(self.linear(embeddings)) > 0.5).int()


class SetFitModel(nn.Module):
    def __init__(self, use_differentiable_head=True):
        super().__init__()
        self.model_body = Body()
        self.model_head = SetFitHead()
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if use_differentiable_head:
            self.to(device)

    def predict(self, texts):
        with torch.no_grad():
            return self.model_head.predict(self.model_body.encode(texts))


class Trainer:
    def __init__(self, model, eval_dataset, metric):
        self.model = model
        self.eval_dataset = eval_dataset
        self.metric = metric

    def evaluate(self):
        x_test, y_test = self.eval_dataset["text"], self.eval_dataset["label"]
        y_pred = self.model.predict(x_test)
        return self.metric(y_pred, y_test)


def compute_metrics(predictions, labels):
    predictions = predictions.numpy()  # expect: DL204
    correct = sum(int(p == l) for p, l in zip(predictions.tolist(), labels))
    return {"subset_accuracy": correct / len(labels)}


if __name__ == "__main__":
    data = {"text": ["good film", "bad plot", "fine"], "label": [[1, 0, 0], [0, 1, 0], [1, 0, 1]]}
    trainer = Trainer(SetFitModel(use_differentiable_head=True), data, compute_metrics)
    print(trainer.evaluate())
