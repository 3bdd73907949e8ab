# source: https://github.com/KaidiXu/Beta-CROWN/pull/1
# fixed twin: load_model hands the chosen device to torch.load as map_location when it is the CPU.
import argparse
import os
import tempfile

import torch
import torch.nn as nn


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


def mnist_cnn_4layer():
    return nn.Sequential(
        nn.Conv2d(1, 4, 4, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(4, 8, 4, stride=2, padding=1), nn.ReLU(),
        Flatten(), nn.Linear(8 * 7 * 7, 32), nn.ReLU(), nn.Linear(32, 10),
    )


MODELS = {"mnist_cnn_4layer": mnist_cnn_4layer}


def load_model(args, weights_loaded=True):
    model_ori = MODELS[args.model]()
    if not weights_loaded:
        return model_ori
    model_ori.load_state_dict(torch.load(args.load, map_location="cpu" if args.device == "cpu" else None))
    return model_ori


def verify(args):
    model = load_model(args).to(args.device)
    x = torch.rand(2, 1, 28, 28, device=args.device)
    eps = 0.3
    lower, upper = model(x - eps), model(x + eps)
    return (upper - lower).abs().max().item()


if __name__ == "__main__":
    torch.manual_seed(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="mnist_cnn_4layer")
    parser.add_argument("--load", default=os.path.join(tempfile.mkdtemp(), "mnist_a_adv.pth"))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args(["--device", "cuda" if torch.cuda.is_available() else "cpu"])
    torch.save(load_model(args, weights_loaded=False).state_dict(), args.load)
    print(verify(args))
