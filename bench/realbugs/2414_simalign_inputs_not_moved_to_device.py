# source: https://github.com/cisnlp/simalign/issues/16
# error: (the issue quotes no message) the embedding lookup of the GPU encoder gets CPU token ids: a device-mismatch RuntimeError
# bug: SentenceAligner(device="cuda") builds an EmbeddingLoader that moves the multilingual
#      encoder to that device, but get_embed_list() passes the tokenizer's output (host tensors)
#      straight to the encoder. The reporter named the missing move; the maintainer's commit
#      (15df16e, "fixed in the new commit") calls the encoder on inputs.to(self.device). The call
#      line is marked (DL203: a model moved to a device is called on a batch that never was).
import torch
import torch.nn as nn


class Encoding(dict):
    def to(self, device):
        return Encoding({k: v.to(device) for k, v in self.items()})


class ToyTokenizer:
    def __call__(self, sents, is_pretokenized=True, padding=True, truncation=True, return_tensors="pt"):
        ids = [[101] + [(sum(map(ord, w)) % 900) + 1 for w in s] + [102] for s in sents]
        width = max(len(r) for r in ids)
        input_ids = torch.tensor([r + [0] * (width - len(r)) for r in ids])
        return Encoding(input_ids=input_ids, attention_mask=(input_ids != 0).long())


class ToyBert(nn.Module):
    def __init__(self, vocab=1000, dim=24, layers=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        hidden = [self.embed(input_ids)]
        for layer in self.layers:
            hidden.append(torch.tanh(layer(hidden[-1])) * attention_mask[..., None])
        return hidden[-1], None, hidden


class EmbeddingLoader(object):
    def __init__(self, device=torch.device("cpu"), layer=2):
        self.device = device
        self.layer = layer
        self.emb_model = ToyBert()
        self.emb_model.eval()
        self.emb_model.to(self.device)
        self.tokenizer = ToyTokenizer()

    def get_embed_list(self, sent_pair):
        if self.emb_model is not None:
            inputs = self.tokenizer(sent_pair, is_pretokenized=True, padding=True, truncation=True, return_tensors="pt")
            outputs = self.emb_model(**inputs)[2][self.layer]  # expect: DL203
            return outputs[:, 1:-1, :]
        return None


class SentenceAligner(object):
    def __init__(self, device="cpu", layer=2):
        self.device = torch.device(device)
        self.embed_loader = EmbeddingLoader(device=self.device, layer=layer)

    def get_word_aligns(self, src_sent, trg_sent):
        vectors = self.embed_loader.get_embed_list([src_sent, trg_sent]).cpu().detach()
        src = nn.functional.normalize(vectors[0, :len(src_sent)], dim=-1)
        trg = nn.functional.normalize(vectors[1, :len(trg_sent)], dim=-1)
        sim = (src @ trg.T + 1.0) / 2.0
        forward = sim.argmax(dim=1)
        backward = sim.argmax(dim=0)
        return [(i, int(j)) for i, j in enumerate(forward) if int(backward[j]) == i]


if __name__ == "__main__":
    aligner = SentenceAligner(device="cuda" if torch.cuda.is_available() else "cpu")
    print(aligner.get_word_aligns("this is a test".split(), "das ist ein Test".split()))
