# source: https://github.com/mlcommons/GaNDLF/issues/249
# fixed twin: the weights are loaded with map_location=torch.device(device), as commit 766291ba does.
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class UNetLite(nn.Module):
    def __init__(self, parameters):
        super().__init__()
        ch = parameters["model"]["num_channels"]
        n_cls = len(parameters["model"]["class_list"])
        self.enc = nn.Conv3d(ch, 4, 3, padding=1)
        self.out = nn.Conv3d(4, n_cls, 1)

    def forward(self, x):
        return self.out(torch.relu(self.enc(x)))


global_models_dict = {"unetlite": UNetLite}


def send_model_to_device(model, amp, device, optimizer=None):
    if device == "cuda" and torch.cuda.is_available():
        dev = torch.device("cuda")
    else:
        dev, amp = torch.device("cpu"), False
    return model.to(dev), amp, dev


def validate_network(model, loader, parameters):
    model.eval()
    with torch.no_grad():
        return [model(x.to(parameters["device"])).argmax(1).cpu() for (x,) in loader]


def inference_loop(data, device, parameters, output_dir):
    model = global_models_dict[parameters["model"]["architecture"]](parameters=parameters)
    loader = DataLoader(data, batch_size=1)
    file_to_check = output_dir
    if os.path.isdir(output_dir):
        file_to_check = os.path.join(output_dir, parameters["model"]["architecture"] + "_best.pth.tar")
        if not os.path.isfile(file_to_check):
            raise ValueError("The model specified model was not found:", file_to_check)
    main_dict = torch.load(file_to_check, map_location=torch.device(device))
    model.load_state_dict(main_dict["model_state_dict"])
    model, parameters["model"]["amp"], parameters["device"] = send_model_to_device(
        model, parameters["model"]["amp"], device, optimizer=None)
    return validate_network(model, loader, parameters)


if __name__ == "__main__":
    params = {"model": {"architecture": "unetlite", "num_channels": 1, "class_list": [0, 1], "amp": True}}
    out_dir = tempfile.mkdtemp()
    torch.save({"model_state_dict": UNetLite(params).state_dict()},
               os.path.join(out_dir, "unetlite_best.pth.tar"))
    data = TensorDataset(torch.randn(2, 1, 8, 8, 8))
    print([p.shape for p in inference_loop(data, "cpu", params, out_dir)])
