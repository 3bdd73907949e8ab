# source: https://github.com/awslabs/gluonts/pull/1230
# error: (PR "Fixed pytorch's predict to numpy helper": "currently this does not work when the tensors are on the gpu")
#        TypeError: can't convert cuda:0 device type tensor to numpy
# bug: gluonts/torch/model/predictor.py's PyTorchPredictor batches the inference data with
#      batchify(data, self.device), so the inputs are built on the predictor's device, and runs the prediction net
#      there; SampleForecastGenerator turns each batch's output into NumPy through the predict_to_numpy dispatcher,
#      whose nn.Module implementation returns prediction_net(*inputs).data.numpy(), a CUDA tensor on a GPU predictor.
#      The fix (commit 8d6080c) returns prediction_net(*inputs).cpu().numpy(); that line is marked (DL204).
#      Reductions: InferenceDataLoader becomes a loop over slices of the dataset handed to the same stack_fn; the
#      forecast generator keeps its per-batch predict_to_numpy call and yields each item's sample array (SampleForecast,
#      output_transform, the num_samples loop, serialisation and __eq__ are dropped); the driver's prediction net is a
#      small module that draws sample paths from the past target, standing for a trained estimator's network.
#      NumPy is imported as upstream (absent here), so the file does not run on this machine.
from functools import singledispatch
from typing import Iterator, List, Optional

import numpy as np
import torch
import torch.nn as nn


# --- gluonts/model/forecast_generator.py ---
@singledispatch
def predict_to_numpy(prediction_net, tensor) -> np.ndarray:
    raise NotImplementedError


class SampleForecastGenerator:
    def __call__(self, inference_data_loader, prediction_net, input_names: List[str]) -> Iterator[np.ndarray]:
        for batch in inference_data_loader:
            inputs = [batch[k] for k in input_names]
            outputs = predict_to_numpy(prediction_net, inputs)
            for i, output in enumerate(outputs):
                yield output


# --- gluonts/torch/batchify.py ---
def stack(data, device: Optional[torch.device] = None):
    if isinstance(data[0], np.ndarray):
        data = torch.tensor(data, device=device)
    elif isinstance(data[0], (list, tuple)):
        return list(stack(t, device=device) for t in zip(*data))
    return data


def batchify(data: List[dict], device: Optional[torch.device] = None):
    return {
        key: stack(data=[item[key] for item in data], device=device)
        for key in data[0].keys()
    }


# --- gluonts/torch/model/predictor.py ---
@predict_to_numpy.register(nn.Module)
def _(prediction_net: nn.Module, inputs: torch.Tensor) -> np.ndarray:
    return prediction_net(*inputs).data.numpy()  # expect: DL204


class PyTorchPredictor:
    def __init__(self, input_names: List[str], prediction_net: nn.Module, batch_size: int,
                 prediction_length: int, device: torch.device,
                 forecast_generator: SampleForecastGenerator = SampleForecastGenerator()) -> None:
        self.input_names = input_names
        self.prediction_net = prediction_net
        self.batch_size = batch_size
        self.prediction_length = prediction_length
        self.forecast_generator = forecast_generator
        self.device = device

    def predict(self, dataset) -> Iterator[np.ndarray]:
        stack_fn = lambda data: batchify(data, self.device)
        inference_data_loader = (stack_fn(dataset[i:i + self.batch_size])
                                 for i in range(0, len(dataset), self.batch_size))
        self.prediction_net.eval()
        with torch.no_grad():
            yield from self.forecast_generator(
                inference_data_loader=inference_data_loader,
                prediction_net=self.prediction_net,
                input_names=self.input_names,
            )


# --- driver: a network trained on the GPU, predicting there ---
class SamplePathNetwork(nn.Module):
    def __init__(self, context_length: int, prediction_length: int, num_samples: int = 10):
        super().__init__()
        self.proj = nn.Linear(context_length, 2 * prediction_length)
        self.prediction_length = prediction_length
        self.num_samples = num_samples

    def forward(self, past_target: torch.Tensor) -> torch.Tensor:
        loc, scale = self.proj(past_target).chunk(2, dim=-1)
        samples = torch.distributions.Normal(loc, nn.functional.softplus(scale)).sample((self.num_samples,))
        return samples.transpose(0, 1)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = SamplePathNetwork(context_length=24, prediction_length=6).to(device)
    predictor = PyTorchPredictor(input_names=["past_target"], prediction_net=net, batch_size=4,
                                 prediction_length=6, device=device)
    dataset = [{"past_target": np.random.rand(24).astype(np.float32)} for _ in range(10)]
    forecasts = list(predictor.predict(dataset))
    print(len(forecasts), forecasts[0].shape)
