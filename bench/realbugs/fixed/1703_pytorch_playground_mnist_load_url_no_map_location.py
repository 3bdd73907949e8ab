# source: https://github.com/aaron-xichen/pytorch-playground/pull/60
# fixed twin: the builder takes cuda=True and passes map_location="cuda" or "cpu" to load_url, as the PR describes; a CPU-only caller passes cuda=False.
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


def mnist(input_dims=784, n_hiddens=(32, 32), n_class=10, pretrained=None, cuda=True):
    model = MLP(input_dims, list(n_hiddens), n_class)
    if pretrained is not None:
        m = model_zoo.load_url(model_urls["mnist"], model_dir=os.path.join(tempfile.gettempdir(), "playground_1703"), progress=False,
                               map_location="cuda" if cuda else "cpu")
        state_dict = m.state_dict() if isinstance(m, nn.Module) else m
        model.load_state_dict(state_dict)
    return model


def main():
    src = os.path.join(tempfile.mkdtemp(), "mnist-1703.pth")
    torch.save(MLP(784, [32, 32], 10).state_dict(), src)
    model_urls["mnist"] = "file://" + src
    model = mnist(pretrained=True, cuda=torch.cuda.is_available())
    print(model(torch.rand(4, 1, 28, 28)).argmax(1))


if __name__ == "__main__":
    main()
