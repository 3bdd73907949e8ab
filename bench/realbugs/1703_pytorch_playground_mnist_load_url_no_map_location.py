# source: https://github.com/aaron-xichen/pytorch-playground/pull/60
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location='cpu' to map your storages to the CPU.
# bug: the model-zoo builder for the MNIST MLP fetches its pretrained weights with
#      model_zoo.load_url and no map_location; the published file holds GPU storages, so
#      asking for the pretrained model on a CPU-only machine fails. The PR (closed without merge;
#      the change its description states) adds a cuda=True argument to the builder and passes
#      map_location="cuda" or "cpu" to load_url; the load_url line is marked (DL301: a checkpoint
#      load without map_location - load_url calls torch.load).
import os
import tempfile
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.utils.model_zoo as model_zoo

model_urls = {
    "mnist": None,  # set by main() to a local file:// copy of the published weights
}


class MLP(nn.Module):
    def __init__(self, input_dims, n_hiddens, n_class):
        super().__init__()
        self.input_dims = input_dims
        layers = OrderedDict()
        current = input_dims
        for i, n_hidden in enumerate(n_hiddens):
            layers["fc{}".format(i + 1)] = nn.Linear(current, n_hidden)
            layers["relu{}".format(i + 1)] = nn.ReLU()
            current = n_hidden
        layers["out"] = nn.Linear(current, n_class)
        self.model = nn.Sequential(layers)

    def forward(self, x):
        return self.model(x.view(x.size(0), -1))


def mnist(input_dims=784, n_hiddens=(32, 32), n_class=10, pretrained=None):
    model = MLP(input_dims, list(n_hiddens), n_class)
    if pretrained is not None:
        m = model_zoo.load_url(model_urls["mnist"], model_dir=os.path.join(tempfile.gettempdir(), "playground_1703"), progress=False)  # expect: DL301
        state_dict = m.state_dict() if isinstance(m, nn.Module) else m
        model.load_state_dict(state_dict)
    return model


def main():
    src = os.path.join(tempfile.mkdtemp(), "mnist-1703.pth")
    torch.save(MLP(784, [32, 32], 10).state_dict(), src)
    model_urls["mnist"] = "file://" + src
    model = mnist(pretrained=True)
    print(model(torch.rand(4, 1, 28, 28)).argmax(1))


if __name__ == "__main__":
    main()
