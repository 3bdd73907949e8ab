# source: https://github.com/vllm-project/compressed-tensors/pull/12
# error: RuntimeError: Expected all tensors to be on the same device (scale/zero point on the CPU, activations on cuda:0)
# bug: quantization calibration wraps a module that already sits on the GPU; its min/max observer
#      builds the new scale and zero point with torch.tensor([...]) on the CPU, and they are written
#      into the module's parameters as they are, so fake-quantizing the CUDA input mixes devices. The
#      fix moves the observed qparams (and the initial empty parameters) to the module's device and
#      gives the 0-dim q_max the input's device (0-dim CPU tensors are tolerated by PyTorch: DL202 is
#      the closest rule for that line).
import torch
import torch.nn as nn
from torch.nn import Parameter


def observe_minmax(observed):
    min_val = torch.tensor([observed.min()])
    max_val = torch.tensor([observed.max()])
    scale = (max_val - min_val) / 255
    zero_point = ((0 - min_val) / scale).to(torch.int8)
    return scale, zero_point


def fake_quantize(x, scale, zero_point, num_bits=8):
    max_q = torch.tensor(2**num_bits - 1)  # expect: DL202
    q = torch.clamp(torch.round(x / scale + zero_point), 0, max_q)
    return (q - zero_point) * scale


def initialize_for_quantization(module: nn.Module, base_name: str):
    init_scale = Parameter(torch.empty(0), requires_grad=False)  # expect: DL202
    module.register_parameter(f"{base_name}_scale", init_scale)
    init_zero_point = Parameter(torch.empty(0, dtype=int), requires_grad=False)  # expect: DL202
    module.register_parameter(f"{base_name}_zero_point", init_zero_point)


def calibrate_and_quantize(module: nn.Module, value: torch.Tensor, base_name: str):
    scale = getattr(module, f"{base_name}_scale")
    zero_point = getattr(module, f"{base_name}_zero_point")
    updated_scale, updated_zero_point = observe_minmax(value)
    scale.data = updated_scale  # expect: DL201
    zero_point.data = updated_zero_point  # expect: DL201
    return fake_quantize(value, scale, zero_point)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    layer = nn.Linear(16, 16).to(device)
    initialize_for_quantization(layer, "input")
    x = torch.randn(4, 16, device=device)
    out = layer(calibrate_and_quantize(layer, x, "input"))
    print(out.shape)
