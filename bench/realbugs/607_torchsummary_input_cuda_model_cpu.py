# source: https://github.com/sksq96/pytorch-summary/issues/16
# error: RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same
# bug: summary() builds its dummy input with the legacy torch.cuda.FloatTensor type whenever a GPU is
#      available (device defaults to "cuda"), whatever device the model's parameters are on, so a
#      model that was never moved gets a CUDA input. The thread's workaround moves the model; the
#      library later replaced the typed-tensor choice with an explicit device argument. The marker
#      sits on the line that picks the CUDA type (DL306, legacy CUDA tensor types, is the closest rule).
from collections import OrderedDict

import torch
import torch.nn as nn


def summary(model, input_size, device="cuda"):
    def register_hook(module):
        def hook(module, input, output):
            key = "%s-%i" % (module.__class__.__name__, len(summary) + 1)
            summary[key] = OrderedDict()
            summary[key]["output_shape"] = [-1] + list(output.size())[1:]
            summary[key]["nb_params"] = sum(p.numel() for p in module.parameters(recurse=False))

        if not isinstance(module, (nn.Sequential, nn.ModuleList)) and module is not model:
            hooks.append(module.register_forward_hook(hook))

    device = device.lower()
    assert device in ["cuda", "cpu"], "Input device is not valid, please specify 'cuda' or 'cpu'"
    if device == "cuda" and torch.cuda.is_available():
        dtype = torch.cuda.FloatTensor  # expect: DL306
    else:
        dtype = torch.FloatTensor
    x = torch.rand(2, *input_size).type(dtype)

    summary = OrderedDict()
    hooks = []
    model.apply(register_hook)
    model(x)
    for h in hooks:
        h.remove()
    for layer, info in summary.items():
        print("{:>20}  {:>25} {:>15}".format(layer, str(info["output_shape"]), "{0:,}".format(info["nb_params"])))


if __name__ == "__main__":
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 28 * 14, 10))
    summary(model, (3, 30, 16))
