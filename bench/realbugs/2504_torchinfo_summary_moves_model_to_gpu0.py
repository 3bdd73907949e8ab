# source: https://github.com/TylerYep/torchinfo/issues/209
# error: a model on GPU 5 is moved to GPU 0 by summary(); the next forward with the user's data on GPU 5 fails: Expected all tensors to be on the same device
# bug: summary() without device= picks torch.device("cuda" if torch.cuda.is_available() else "cpu")
#      - the current GPU, not the GPU the model is on - and runs model.to(device)(*x), which moves
#      the caller's model in place. A model placed on another GPU ends up on GPU 0 after the
#      summary, and the caller's own tensors, still on its GPU, no longer meet it. The fix (PR 211,
#      commit 8305e1f) takes the device of the model's first parameter when it is a CUDA device.
#      The marker is on the line the fix changed (DL302: CUDA chosen because a GPU exists, in a
#      function that is handed a model and tensors placed elsewhere).
from typing import Any, List, Optional

import torch
import torch.nn as nn


def set_device(data: Any, device) -> Any:
    if isinstance(data, torch.Tensor):
        return data.to(device, non_blocking=True)
    if isinstance(data, (list, tuple)):
        return type(data)(set_device(d, device) for d in data)
    if isinstance(data, dict):
        return {k: set_device(v, device) for k, v in data.items()}
    return data


def process_input(input_data, input_size, device) -> List[torch.Tensor]:
    if input_data is not None:
        x = set_device(input_data, device)
        return [x] if isinstance(x, torch.Tensor) else list(x)
    return [torch.rand(*input_size).to(device)]


def forward_pass(model: nn.Module, x: List[torch.Tensor], device) -> List[str]:
    rows = []
    hooks = [m.register_forward_hook(lambda m, i, o: rows.append("{:<12}{}".format(
        m.__class__.__name__, tuple(o.shape)))) for m in model.modules() if not list(m.children())]
    try:
        with torch.no_grad():
            _ = model.to(device)(*x)
    finally:
        for h in hooks:
            h.remove()
    return rows


def summary(model: nn.Module, input_size: Optional[tuple] = None, input_data: Any = None, device=None):
    if device is None:
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: DL302
    x = process_input(input_data, input_size, device)
    rows = forward_pass(model, x, device)
    print("\n".join(rows))
    return rows


if __name__ == "__main__":
    gpu = torch.device("cuda", torch.cuda.device_count() - 1) if torch.cuda.is_available() else "cpu"
    linear = nn.Linear(100, 10).to(gpu)
    a = torch.randn(32, 100).to(gpu)
    summary(linear, input_data=a)
    out = linear(a)
    print(next(linear.parameters()).device, out.shape)
