# source: https://github.com/computationalmedia/semstyle/issues/3
# fixed twin: the model state is loaded with map_location (onto the CPU; the model is moved to the GPU afterwards). The reporter's exact argument is cut off in the stored text.
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
    loaded_state = torch.load(os.path.join(model_path, fname), map_location=lambda storage, loc: storage)
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
