# source: https://github.com/NVIDIA-AI-IOT/torch2trt/issues/834
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
# bug: the converter for torch.clamp builds the TensorRT constant for a bound as `val * torch.ones(...).cpu().numpy()`,
#      which assumes a Python number. A module that clamps with tensor bounds kept on the GPU (as the report's module
#      does) hands a CUDA tensor as `val`; multiplying it by a host ndarray makes torch turn the array's partner into
#      NumPy and fails. The fix (PR 836, commit 3f129ab) sends tensor bounds through a new helper that adds them to
#      the network as tensors; the line the traceback points to is marked (DL204: NumPy conversion of a GPU tensor).
import torch

try:
    import numpy as np
except ImportError:  # the demo needs NumPy, as the converter does
    np = None


class FakeNetwork:
    """Stands in for the TensorRT network: constants must be host arrays."""

    def __init__(self):
        self.layers = []

    def add_constant(self, shape, weights):
        if not isinstance(weights, np.ndarray):
            weights = np.asarray(weights)
        self.layers.append(("constant", shape, weights))
        return len(self.layers) - 1

    def add_tensor(self, tensor):
        self.layers.append(("tensor", tuple(tensor.shape), tensor.detach().cpu()))
        return len(self.layers) - 1

    def add_elementwise(self, a, b, op):
        self.layers.append(("elementwise", a, b, op))
        return len(self.layers) - 1


def _add_clamp(network, trt_input, ndim, val, op):
    val_shape = (1,) * ndim
    val_tensor = val * torch.ones(val_shape, dtype=torch.float32).cpu().numpy()  # expect: DL204
    const = network.add_constant(val_shape, val_tensor)
    return network.add_elementwise(trt_input, const, op)


def convert_clamp(network, x, kwargs):
    layer = network.add_tensor(x)
    if kwargs.get("min") is not None:
        layer = _add_clamp(network, layer, x.dim(), kwargs["min"], "max")
    if kwargs.get("max") is not None:
        layer = _add_clamp(network, layer, x.dim(), kwargs["max"], "min")
    return layer


class ClampModule(torch.nn.Module):
    def __init__(self, lower_bound, upper_bound):
        super().__init__()
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def forward(self, t):
        return torch.clamp(t, min=self.lower_bound, max=self.upper_bound)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    lower = torch.tensor((1.0, 1.0)).to(device)
    upper = torch.tensor((5.0, 5.0)).to(device)
    x = torch.tensor((3.0, 3.0)).to(device)
    model = ClampModule(lower, upper).to(device).eval()
    print(model(x))
    if np is None:
        print("NumPy is absent: the conversion step is skipped")
    else:
        net = FakeNetwork()
        print(convert_clamp(net, x, {"min": model.lower_bound, "max": model.upper_bound}), len(net.layers))
