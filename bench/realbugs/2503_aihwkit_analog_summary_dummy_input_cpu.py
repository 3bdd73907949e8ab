# source: https://github.com/IBM/aihwkit/pull/392
# error: RuntimeError: Expected all tensors to be on the same device (analog_summary of a model moved to cuda; the PR does not quote the message)
# bug: analog_summary() builds an AnalogInfo, which registers shape hooks on every leaf layer and runs
#      the model once on a dummy input made with torch.zeros(self.input_size), on the host, whatever
#      device the model is on; summarising a model that was moved to the GPU fails in its first
#      layer. The merged fix (commit 2a0dd9a) reads the device of the model's first parameter and
#      moves the dummy input there. The marker is on the line the fix changed (DL202: a factory
#      without device= meets the model's parameters).
from typing import List

import torch
import torch.nn as nn


class LayerInfo:
    def __init__(self, module, input_size, output_size):
        self.name = module.__class__.__name__
        self.input_size = input_size
        self.output_size = output_size
        self.num_params = sum(p.numel() for p in module.parameters())

    def __repr__(self):
        return "{:<12}{:<16}{:<16}{:<8}".format(self.name, str(self.input_size), str(self.output_size),
                                               self.num_params)


class AnalogInfo:
    def __init__(self, model: nn.Module, input_size=None):
        self.model = model
        self.input_size = input_size
        self.layer_summary = self.create_layer_summary()

    def register_hooks_recursively(self, module, hook):
        if list(module.children()) == []:
            module.register_forward_hook(hook)
        else:
            for _, layer in module.named_children():
                self.register_hooks_recursively(layer, hook)

    def create_layer_summary(self) -> List[LayerInfo]:
        layer_summary = []

        def get_size_hook(module, inputs, output):
            layer_summary.append(LayerInfo(module, list(inputs[0].size()), list(output.size())))

        self.register_hooks_recursively(self.model, get_size_hook)
        dummy_var = torch.zeros(self.input_size)  # expect: DL202
        self.model(dummy_var)
        return layer_summary

    def __repr__(self):
        lines = ["Model Name: " + self.model.__class__.__name__]
        lines += [repr(layer) for layer in self.layer_summary]
        return "\n".join(lines)


def analog_summary(model, input_size=None):
    results = AnalogInfo(model, input_size)
    print(results)
    return results


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(4, 2), nn.Sigmoid(), nn.Linear(2, 1))
    if torch.cuda.is_available():
        model = model.cuda()
    analog_summary(model, (1, 4))
