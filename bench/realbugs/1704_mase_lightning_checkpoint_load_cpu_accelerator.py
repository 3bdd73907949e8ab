# source: https://github.com/DeepWok/mase/issues/46
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. (running the search action with --accelerator cpu and --load of a Lightning checkpoint trained on a GPU)
# bug: the tool's checkpoint helpers restore a Lightning checkpoint's state dict with a bare
#      torch.load, so a checkpoint written during GPU training cannot be loaded on a CPU-only
#      machine even when the user asks for the CPU accelerator. The traceback ends at the
#      torch.load in the Lightning-checkpoint helper; that line is marked (DL301). The issue was
#      closed without the fix in the stored text, so there is no twin. The two sibling helpers
#      load the same way but the report does not reach them: they are left unmarked.
import os
import tempfile

import torch
import torch.nn as nn


def load_lightning_ckpt_to_unwrapped_model(checkpoint, model):
    src_state_dict = torch.load(checkpoint)["state_dict"]  # expect: DL301
    tgt_state_dict = model.state_dict()
    new_state_dict = {}
    for k, v in src_state_dict.items():
        key = ".".join(k.split(".")[1:]) if "model." in k else k
        if key in tgt_state_dict:
            new_state_dict[key] = v
    model.load_state_dict(new_state_dict, strict=False)
    return model


def load_unwrapped_ckpt(checkpoint, model):
    state_dict = torch.load(checkpoint)
    if "state_dict" in state_dict:
        state_dict = state_dict["state_dict"]
    model.load_state_dict(state_dict, strict=False)
    return model


def load_model(load_name, load_type, model):
    if load_type == "pt":
        return load_unwrapped_ckpt(load_name, model)
    if load_type == "pl":
        return load_lightning_ckpt_to_unwrapped_model(load_name, model)
    raise ValueError("unknown load_type " + load_type)


class JetSubstructureNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 5))

    def forward(self, x):
        return self.seq(x)


def search(load_name, accelerator="cpu"):
    model = JetSubstructureNet()
    model = load_model(load_name, "pl", model)
    model.to(accelerator)
    with torch.no_grad():
        return model(torch.randn(3, 16, device=accelerator)).argmax(-1)


def main():
    # a Lightning checkpoint written by the training run (on a GPU machine)
    ckpt = os.path.join(tempfile.mkdtemp(), "best.ckpt")
    wrapped = nn.Module()
    wrapped.model = JetSubstructureNet()
    torch.save({"state_dict": wrapped.state_dict(), "epoch": 49}, ckpt)
    print(search(ckpt, accelerator="cpu"))


if __name__ == "__main__":
    main()
