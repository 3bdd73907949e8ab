# source: https://github.com/chemprop/chemprop/pull/978
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu')
# bug: the utility that converts a version-1 model file to a version-2 checkpoint reads the old file
#      with torch.load and no map_location; a v1 model trained on the GPU holds CUDA tensors in its
#      state dict, so converting it on a CPU-only machine fails. The fix (commit 00bae55) loads with
#      map_location=torch.device("cpu") (it also swaps an equivalent identity-lambda map_location for
#      that device in the v2 loader, not a bug; DL301).
import os
import sys
import tempfile

import torch


def convert_state_dict_v1_to_v2(model_v1_dict: dict) -> dict:
    state_dict_v2 = {}
    for key, value in model_v1_dict["state_dict"].items():
        new_key = key.replace("encoder.encoder.0.", "message_passing.").replace("readout.", "predictor.ffn.")
        state_dict_v2[new_key] = value
    return state_dict_v2


def convert_hyper_parameters_v1_to_v2(model_v1_dict: dict) -> dict:
    args = model_v1_dict["args"]
    return {"message_passing": {"d_h": args["hidden_size"], "depth": args["depth"]}, "batch_norm": False}


def convert_model_dict_v1_to_v2(model_v1_dict: dict) -> dict:
    return {
        "epoch": None,
        "state_dict": convert_state_dict_v1_to_v2(model_v1_dict),
        "hyper_parameters": convert_hyper_parameters_v1_to_v2(model_v1_dict),
    }


def convert_model_file_v1_to_v2(model_v1_file, model_v2_file) -> None:
    model_v1_dict = torch.load(model_v1_file, map_location=torch.device("cpu"))
    model_v2_dict = convert_model_dict_v1_to_v2(model_v1_dict)
    torch.save(model_v2_dict, model_v2_file)


if __name__ == "__main__":
    v1_file = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "model_v1.pt")
    if not os.path.exists(v1_file):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        weights = {"encoder.encoder.0.W_i.weight": torch.randn(8, 4, device=device), "readout.1.bias": torch.zeros(1, device=device)}
        torch.save({"state_dict": weights, "args": {"hidden_size": 8, "depth": 3}}, v1_file)
    convert_model_file_v1_to_v2(v1_file, v1_file.replace("_v1.pt", "_v2.ckpt"))
    print(torch.load(v1_file.replace("_v1.pt", "_v2.ckpt"), map_location="cpu")["hyper_parameters"])
