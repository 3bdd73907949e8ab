# source: https://github.com/motefly/DeepGBM/issues/4
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the test-set evaluation helper feeds numpy batches to the model on the module-level device,
#      collects each batch's output tensor in a list and returns np.concatenate of that list; on a
#      GPU the outputs are CUDA tensors and numpy's conversion of each element fails. The reporter's
#      fix (later in the stored helper.py) appends outputs.cpu() instead of outputs: the marked line
#      (DL204: numpy conversion of tensors that live on a GPU). Needs numpy to run.
import math

import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class WideDeep(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.deep = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, 1))
        self.wide = nn.Linear(n_features, 1)
        self.criterion = nn.BCEWithLogitsLoss()

    def forward(self, x):
        return torch.sigmoid(self.deep(x) + self.wide(x))

    def true_loss(self, out, target):
        return nn.functional.binary_cross_entropy(out, target)


def EvalTestset(test_x, test_y, model, test_batch_size):
    test_len = test_x.shape[0]
    test_num_batch = math.ceil(test_len / test_batch_size)
    sum_loss = 0.0
    y_preds = []
    model.eval()
    with torch.no_grad():
        for jdx in range(test_num_batch):
            tst_st = jdx * test_batch_size
            tst_ed = min(test_len, tst_st + test_batch_size)
            inputs = torch.from_numpy(test_x[tst_st:tst_ed].astype(np.float32)).to(device)
            outputs = model(inputs)
            targets = torch.from_numpy(test_y[tst_st:tst_ed]).to(device)
            if isinstance(outputs, tuple):
                outputs = outputs[0]
            y_preds.append(outputs)  # expect: DL204
            sum_loss += (tst_ed - tst_st) * model.true_loss(outputs, targets).item()
    return sum_loss / test_len, np.concatenate(y_preds, 0)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    test_x = rng.standard_normal((100, 6))
    test_y = (rng.random((100, 1)) > 0.5).astype(np.float32)
    model = WideDeep(6).to(device)
    loss, pred_y = EvalTestset(test_x, test_y, model, 32)
    print(loss, pred_y.shape)
