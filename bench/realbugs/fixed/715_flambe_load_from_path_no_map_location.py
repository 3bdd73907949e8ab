# source: https://github.com/asappresearch/flambe/pull/101
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False (loading a GPU-trained component on the CPU)
# bug: the serialization helpers accept a map_location and pass it to torch.load, but the component's
#      load_from_path classmethod calls them without one and has no parameter for it, so a component
#      saved after GPU training cannot be loaded into a CPU configuration. The fix (commit 04a610e) adds
#      map_location to load_from_path and passes it to both helpers (DL301: checkpoint loads that leave
#      map_location unset).
import os
import sys
import tempfile

import torch
import torch.nn as nn

STATE_FILE_NAME = "state.pt"


def load_state_from_file(path, map_location=None):
    return torch.load(os.path.join(path, STATE_FILE_NAME), map_location)


def flambe_load(path, map_location=None):
    state = load_state_from_file(path, map_location=map_location)
    instance = TextClassifier(**state.pop("_config"))
    instance.load_state_dict(state)
    return instance


class TextClassifier(nn.Module):
    def __init__(self, vocab=30, dim=8, n_classes=2):
        super().__init__()
        self.config = {"vocab": vocab, "dim": dim, "n_classes": n_classes}
        self.embedding = nn.EmbeddingBag(vocab, dim)
        self.output = nn.Linear(dim, n_classes)

    def forward(self, tokens):
        return self.output(self.embedding(tokens))

    def save(self, path):
        os.makedirs(path, exist_ok=True)
        torch.save({**self.state_dict(), "_config": self.config}, os.path.join(path, STATE_FILE_NAME))

    @classmethod
    def load_from_path(cls, path, map_location=None, use_saved_config_defaults=True, **kwargs):
        if use_saved_config_defaults:
            instance = flambe_load(path, map_location=map_location)
        else:
            loaded_state = load_state_from_file(path, map_location=map_location)
            loaded_state.pop("_config")
            instance = cls(**kwargs)
            instance.load_state_dict(loaded_state)
        return instance


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "classifier")
    if not os.path.exists(path):
        TextClassifier().to("cuda" if torch.cuda.is_available() else "cpu").save(path)
    model = TextClassifier.load_from_path(path)
    print(model(torch.randint(0, 30, (2, 5))))
