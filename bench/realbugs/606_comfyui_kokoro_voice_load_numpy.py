# source: https://github.com/stavsap/comfyui-kokoro/issues/24
# error: TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (traceback in the same reporter's issue #21: data: np.ndarray = torch.load(content, weights_only=True).numpy())
# bug: the node downloads each voice style tensor (.pt) and converts it to a numpy array with
#      torch.load(...).numpy(); the voice files hold tensors that were saved from a GPU, and torch.load
#      without map_location restores them onto the GPU, so .numpy() fails. No upstream fix is public:
#      loading with map_location="cpu" (or adding .cpu()) is the fix the message names.
import io
import os

import numpy as np
import torch


def save_voice(path, device):
    style = torch.randn(16, 1, 8, device=device)
    torch.save(style, path)


def download_voices(voice_dir, names, device):
    os.makedirs(voice_dir, exist_ok=True)
    for name in names:
        path = os.path.join(voice_dir, f"{name}.pt")
        if not os.path.exists(path):
            save_voice(path, device)


def load_voice_array(path):
    with open(path, "rb") as f:
        content = io.BytesIO(f.read())
    data: np.ndarray = torch.load(content, weights_only=True).numpy()  # expect: DL301, DL204
    return data


class KokoroSpeaker:
    def __init__(self, node_dir):
        self.node_dir = node_dir

    def select(self, speaker_name, device):
        voice_dir = os.path.join(self.node_dir, "voices")
        download_voices(voice_dir, [speaker_name], device)
        return {"speaker": load_voice_array(os.path.join(voice_dir, f"{speaker_name}.pt"))}


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(KokoroSpeaker("kokoro_node").select("af_heart", device)["speaker"].shape)
