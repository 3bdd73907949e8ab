# source: https://github.com/meta-pytorch/captum/pull/1189
# error: (PR description) "without this .cpu() call there is an error when training the classifier using cuda,
#        because the predictions will be on the gpu" - indexing the host class tensor with GPU indices
#        (RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu))
# bug: TCAV's DefaultClassifier.train_and_eval gathers the concept activations (on the model's GPU), sets
#      self.lm.device to their device and fits the linear model: sklearn_train_linear_model trains on host copies,
#      moves the weights and bias to that device, but keeps the labels seen as classes = torch.IntTensor(...) on the
#      CPU. train_and_eval then predicts on the GPU and indexes self.lm.classes() (CPU) with the GPU argmax. The PR
#      (commit 0b048b37, open: the line is unchanged at the repository's last commit, so there is no twin) writes
#      torch.argmax(predict, dim=1).cpu(); that line is marked (DL207). Reductions: sklearn's SGDClassifier (and
#      numpy) is a least-squares one-vs-rest stand-in on host tensors, the concept activations are random
#      features, the Classifier base class and the weights/bias accessors are left out.
import random
from typing import Any, Dict, Optional, Tuple, Union, cast

import torch
import torch.nn as nn
from torch import Tensor
from torch.utils.data import DataLoader, TensorDataset


def sklearn_train_linear_model(model, dataloader, construct_kwargs, **fit_kwargs):
    xs, ys = [], []
    for x, y in dataloader:
        xs.append(x.cpu())
        ys.append(y.cpu())
    x, y = torch.cat(xs, 0), torch.cat(ys, 0)
    classes_ = torch.unique(y)
    targets = (y[:, None] == classes_[None, :]).float() * 2 - 1
    x1 = torch.cat([x, torch.ones(x.shape[0], 1)], 1)
    sol = torch.linalg.lstsq(x1, targets).solution
    coef_, intercept_ = sol[:-1].T, sol[-1]
    classes = torch.IntTensor(classes_.int())
    device = getattr(model, "device", "cpu")
    weight_values = torch.FloatTensor(coef_).to(device)
    bias_values = torch.FloatTensor(intercept_).to(device)
    model._construct_model_params(weight_values=weight_values, bias_value=bias_values, classes=classes)
    return {"train_time": 0.0}


class LinearModel(nn.Module):
    def __init__(self, train_fn, **kwargs) -> None:
        super().__init__()
        self.norm: Optional[nn.Module] = None
        self.linear: Optional[nn.Linear] = None
        self.train_fn = train_fn
        self.construct_kwargs = kwargs

    def _construct_model_params(self, weight_values: Tensor, bias_value: Optional[Tensor] = None,
                                classes: Optional[Tensor] = None) -> None:
        in_features = weight_values.shape[-1]
        out_features = 1 if len(weight_values.shape) == 1 else weight_values.shape[0]
        self.linear = nn.Linear(in_features, out_features, bias=True)
        self.linear.weight.data = weight_values
        if bias_value is not None:
            self.linear.bias.data = bias_value
        if classes is not None:
            self.linear.classes = classes

    def fit(self, train_data: DataLoader, **kwargs):
        return self.train_fn(self, dataloader=train_data, construct_kwargs=self.construct_kwargs, **kwargs)

    def forward(self, x: Tensor) -> Tensor:
        assert self.linear is not None
        if self.norm is not None:
            x = self.norm(x)
        return self.linear(x)

    def classes(self) -> Optional[Tensor]:
        if self.linear is None or self.linear.classes is None:
            return None
        return cast(Tensor, self.linear.classes).detach()


class SkLearnSGDClassifier(LinearModel):
    def __init__(self, **kwargs) -> None:
        super().__init__(train_fn=sklearn_train_linear_model, **kwargs)


def _train_test_split(x_list: Tensor, y_list: Tensor, test_split: float = 0.33) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    z_list = list(zip(x_list, y_list))
    random.shuffle(z_list)
    test_size = int(test_split * len(z_list))
    z_test, z_train = z_list[:test_size], z_list[test_size:]
    x_test, y_test = zip(*z_test)
    x_train, y_train = zip(*z_train)
    return torch.stack(x_train), torch.stack(x_test), torch.stack(y_train), torch.stack(y_test)


class DefaultClassifier:
    def __init__(self) -> None:
        self.lm = SkLearnSGDClassifier(alpha=0.01, max_iter=1000, tol=1e-3)

    def train_and_eval(self, dataloader: DataLoader, test_split_ratio: float = 0.33, **kwargs: Any) -> Union[Dict, None]:
        inputs = []
        labels = []
        for input, label in dataloader:
            inputs.append(input)
            labels.append(label)
        device = "cpu" if input is None else input.device
        x_train, x_test, y_train, y_test = _train_test_split(torch.cat(inputs), torch.cat(labels), test_split=test_split_ratio)
        self.lm.device = device
        self.lm.fit(DataLoader(TensorDataset(x_train, y_train)))
        predict = self.lm(x_test)
        predict = self.lm.classes()[torch.argmax(predict, dim=1)]  # expect: DL207
        score = predict.long() == y_test.long().cpu()
        accs = score.float().mean()
        return {"accs": accs}


if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    activations = torch.randn(90, 16, device=device)
    concept_ids = torch.arange(3, device=device).repeat_interleave(30)
    activations = activations + concept_ids[:, None].float()
    loader = DataLoader(TensorDataset(activations, concept_ids), batch_size=10)
    print(DefaultClassifier().train_and_eval(loader))
