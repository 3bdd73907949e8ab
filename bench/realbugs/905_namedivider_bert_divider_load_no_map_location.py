# source: https://github.com/rskmoi/namedivider-python/pull/45
# error: RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU.
# bug: the katakana name divider picks self.device from torch.cuda.is_available() and moves its BERT
#      classifier there, but loads the packaged weights (saved from a GPU) with a bare torch.load, so
#      the library cannot be used on a CPU-only machine. The fix (commit 2894e9b) passes
#      map_location=torch.device(self.device); the changed line is marked (DL301).
import os
import sys
import tempfile

import torch
import torch.nn as nn


class TinyBertForSequenceClassification(nn.Module):
    def __init__(self, vocab_size=64, hidden=16, num_labels=8):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(hidden, 2, 32, batch_first=True), 1)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids):
        return self.classifier(self.encoder(self.embeddings(input_ids))[:, 0])


class BERTNameDividerOnlyKatakana:
    def __init__(self, model_path):
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        model = TinyBertForSequenceClassification()
        model.load_state_dict(torch.load(model_path))  # expect: DL301
        self.model = model.to(self.device)
        self.vocab = {chr(0x30A1 + i): i + 1 for i in range(60)}

    def divide_name(self, undivided_name):
        ids = [0] + [self.vocab.get(ch, 0) for ch in undivided_name]
        with torch.no_grad():
            logits = self.model(torch.tensor([ids], device=self.device))
        split = int(logits.argmax(dim=-1).item()) % max(len(undivided_name) - 1, 1) + 1
        return undivided_name[:split], undivided_name[split:]


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "bert_katakana.pt")
    if not os.path.exists(path):
        device = "cuda" if torch.cuda.is_available() else "cpu"
        torch.save(TinyBertForSequenceClassification().to(device).state_dict(), path)
    divider = BERTNameDividerOnlyKatakana(path)
    print(divider.divide_name("タナカタロウ"))
