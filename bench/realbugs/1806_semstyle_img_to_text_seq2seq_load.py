# source: https://github.com/computationalmedia/semstyle/issues/3
# error: RuntimeError: Attempting to deserialize object on CUDA device 2 but torch.cuda.device_count() is 1. Please use torch.load with map_location to map your storages to an existing device.
# bug: the captioning demo (img_to_text.py) restores the released term-to-sentence model with a
#      bare torch.load of its state; the file was saved on the authors' third GPU, so loading needs
#      a cuda:2 that the user's one-GPU machine lacks. The reporter's change, which the thread (and
#      another project's issue pointing to it) gives as the solution, adds a map_location to that
#      torch.load; it is marked (DL301).
import os
import tempfile

import torch
import torch.nn as nn

use_cuda = torch.cuda.is_available()


class Seq2Seq(nn.Module):
    def __init__(self, vocab=40, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden)
        self.decoder = nn.GRU(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, terms, steps=5):
        _, h = self.encoder(self.embed(terms))
        x = h.expand(steps, -1, -1).contiguous()
        y, _ = self.decoder(x, h)
        return self.out(y).argmax(-1)


def build_model(model_path, fname):
    model = Seq2Seq()
    loaded_state = torch.load(os.path.join(model_path, fname))  # expect: DL301
    model.load_state_dict(loaded_state["model"])
    if use_cuda:
        model = model.cuda()
    return model.eval()


def main(model_path, fname):
    model = build_model(model_path, fname)
    terms = torch.randint(0, 40, (4, 2))
    if use_cuda:
        terms = terms.cuda()
    print(model(terms).shape)


if __name__ == "__main__":
    folder = tempfile.mkdtemp()
    torch.save({"model": Seq2Seq().state_dict()}, os.path.join(folder, "seq_to_seq_test.pt"))
    main(folder, "seq_to_seq_test.pt")
