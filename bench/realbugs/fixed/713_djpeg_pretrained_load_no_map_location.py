# source: https://github.com/plok5308/DJPEG-torch/pull/2
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the localisation demo and the validation script both pick cuda:0 or the CPU, but load the
#      released weights (saved from the GPU) with torch.load and no map_location before moving the
#      network to that device, so neither runs on a CPU-only machine. The fix (commit 9fca0de) passes
#      map_location=device in both loads (DL301).
import os
import sys
import tempfile

import torch
import torch.nn as nn


class Djpegnet(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8 + 64, 2)

    def forward(self, x, qvectors):
        return self.fc(torch.cat([self.features(x).flatten(1), qvectors], dim=1))


def application_main(model_dir):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    net = Djpegnet(device)
    net.load_state_dict(torch.load(os.path.join(model_dir, "djpegnet.pth"), map_location=device))
    net.to(device)
    patches = torch.rand(4, 1, 32, 32, device=device)
    return net(patches, torch.rand(4, 64, device=device)).argmax(dim=1)


def valid_main(model_dir, net_name="djpegnet.pth"):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    net = Djpegnet(device)
    net.load_state_dict(torch.load(os.path.join(model_dir, net_name), map_location=device))
    net.to(device)
    optimizer = torch.optim.Adam(net.parameters())
    return net, optimizer


if __name__ == "__main__":
    model_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    weights = os.path.join(model_dir, "djpegnet.pth")
    if not os.path.exists(weights):
        torch.save(Djpegnet("cuda:0").to("cuda:0" if torch.cuda.is_available() else "cpu").state_dict(), weights)
    print(application_main(model_dir))
    print(valid_main(model_dir)[0].fc)
