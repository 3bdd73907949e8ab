# source: https://github.com/HCIILAB/Scene-Text-Recognition-Recommendations/issues/2
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the recognition framework's evaluator moves images and encoded labels to its CUDA device,
#      sums each batch's weighted losses (CUDA scalars) and appends them to a Python list; after the
#      loop it averages them with np.sum, which converts each CUDA tensor to numpy. The fix (commit
#      a72a968, "Fix a potential bug", after the maintainer's advice in the issue) sums
#      [loss.cpu() for loss in losses] instead (DL204 on the np.sum line, where the traceback points).
#      numpy must be installed to run it.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Recognizer(nn.Module):
    def __init__(self, n_chars=10):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.cls = nn.Linear(4, n_chars)

    def forward(self, input_dict):
        feats = self.conv(input_dict["images"]).mean(dim=(2, 3))
        logits = self.cls(feats)
        loss = F.cross_entropy(logits, input_dict["rec_targets"])
        return {"loss": {"loss_rec": loss}, "output": {"pred_rec": logits.argmax(dim=1)}}


class Converter:
    def encode(self, labels):
        ids = torch.tensor([int(s[0]) for s in labels])
        return ids, torch.ones(len(labels), dtype=torch.long)


class BaseEvaluator:
    def __init__(self, model, converter, use_cuda=True, loss_weights=None):
        self.model = model
        self.use_cuda = use_cuda
        self.device = torch.device("cuda" if use_cuda else "cpu")
        self.converter = converter
        self.loss_weights = loss_weights or {"loss_rec": 1.0}

    def evaluate(self, data_loader):
        self.model.eval()
        with torch.no_grad():
            rec_output, targets, losses = [], [], []
            for inputs in data_loader:
                input_dict = self._parse_data(inputs, self.converter)
                output_dict = self._forward(input_dict)
                batch_size = input_dict["images"].size(0)
                total_loss_batch = 0.0
                for k, loss in output_dict["loss"].items():
                    total_loss_batch += self.loss_weights[k] * loss
                targets += inputs[1]
                losses.append(total_loss_batch)
                rec_output.append(output_dict["output"]["pred_rec"].cpu())
            losses = np.sum(losses) / (1.0 * len(data_loader) * batch_size)  # expect: DL204
            preds = torch.cat(rec_output)
            acc = sum(int(p) == int(t[0]) for p, t in zip(preds, targets)) / len(targets)
            return float(losses), acc


class Evaluator(BaseEvaluator):
    def _parse_data(self, inputs, converter):
        imgs, label_encs = inputs
        labels, lengths = converter.encode(label_encs)
        return {"images": imgs.to(self.device), "rec_targets": labels.to(self.device), "rec_lengths": lengths}

    def _forward(self, input_dict):
        with torch.no_grad():
            return self.model(input_dict)


if __name__ == "__main__":
    use_cuda = torch.cuda.is_available()
    model = Recognizer().to("cuda" if use_cuda else "cpu")
    loader = [(torch.randn(2, 1, 8, 8), ["3a", "7b"]) for _ in range(3)]
    print(Evaluator(model, Converter(), use_cuda=use_cuda).evaluate(loader))
