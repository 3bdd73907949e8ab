# source: https://github.com/Lightning-AI/pytorch-lightning/issues/3144
# error: RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same (model.to_onnx(path) after training on a GPU, with example_input_array = torch.zeros(...))
# bug: the module's to_onnx() takes the sample input from its argument or from the module's
#      example_input_array (both typically built on the CPU in __init__ or by the user) and runs
#      the module on it to record example outputs; after training on a GPU the module is on the
#      GPU, so that forward fails. The fix (PR 3145) inserts input_data = input_data.to(self.device)
#      before the example-output forward; the forward the traceback points at is marked (DL203: a
#      model moved to a device is called on an input that never was).
import importlib.util
import os
import tempfile

import torch
import torch.nn as nn


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.example_input_array = None

    @property
    def device(self):
        return next(self.parameters()).device

    def to_onnx(self, file_path, input_sample=None, **kwargs):
        if isinstance(input_sample, torch.Tensor):
            input_data = input_sample
        elif self.example_input_array is not None:
            input_data = self.example_input_array
        else:
            raise ValueError("`input_sample` and `example_input_array` tensors are both missing.")

        if "example_outputs" not in kwargs:
            self.eval()
            kwargs["example_outputs"] = self(input_data)  # expect: DL203

        if importlib.util.find_spec("onnx") is None:
            return kwargs["example_outputs"]
        kwargs.pop("example_outputs")
        torch.onnx.export(self, input_data, file_path, **kwargs)
        return None


class Segmenter(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
        self.example_input_array = torch.zeros(1, 1, 50, 50)

    def forward(self, x):
        return self.net(x)


def fit_on_accelerator(model):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(2, 1, 50, 50, device=device)
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return model


def main():
    model = fit_on_accelerator(Segmenter())
    out = model.to_onnx(os.path.join(tempfile.mkdtemp(), "model.onnx"), export_params=True)
    print("exported" if out is None else tuple(out.shape))


if __name__ == "__main__":
    main()
