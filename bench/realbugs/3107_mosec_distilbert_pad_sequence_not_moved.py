# source: https://github.com/mosecorg/mosec/pull/98
# error: (PR description) "If model is on cuda device, the following line will cause the device error:
#        result = self.model(torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True))[0]"
# bug: in examples/distil_bert_server_pytorch.py the Inference worker picks self.device = cuda when available and
#      moves the sequence classifier there with self.model.to(self.device), but forward builds the batch from the
#      token lists with torch.tensor(...) and pad_sequence on the CPU and calls the model on it unmoved. PR #98
#      (commit 92f4548) appends .to(self.device) to the padded batch; that line is marked (DL203; upstream the call
#      spans three lines, written here on one). Reductions: mosec's Server/Worker (separate processes, batching,
#      IPC) is a small in-process stand-in, the Hugging Face tokenizer and DistilBERT are a toy tokenizer and a
#      small embedding classifier returning a tuple as the HF model does.
import logging
from typing import List, TypeVar

import torch
import torch.nn as nn

T = TypeVar("T")
logger = logging.getLogger()
INFERENCE_BATCH_SIZE = 32


class Worker:
    def __init__(self):
        self.example = None


class Server:
    def __init__(self):
        self.workers = []

    def append_worker(self, worker, max_batch_size=1):
        self.workers.append((worker(), max_batch_size))

    def run(self, requests):
        data = [self.workers[0][0].deserialize(r) for r in requests]
        data = [self.workers[0][0].forward(d) for d in data]
        out = self.workers[1][0].forward(data)
        return [self.workers[1][0].serialize(o) for o in out]


class ToyTokenizer:
    def encode(self, text, add_special_tokens=True):
        ids = [hash(w) % 1000 + 1000 for w in text.split()]
        return [101] + ids + [102] if add_special_tokens else ids


class SequenceClassifier(nn.Module):
    def __init__(self, vocab=30522, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.classifier = nn.Linear(dim, 2)

    def forward(self, input_ids):
        return (self.classifier(self.emb(input_ids).mean(1)),)


class Preprocess(Worker):
    def __init__(self):
        super().__init__()
        self.tokenizer = ToyTokenizer()

    def deserialize(self, data: bytes) -> str:
        return data.decode()

    def forward(self, data: str) -> T:
        tokens = self.tokenizer.encode(data, add_special_tokens=True)
        return tokens


class Inference(Worker):
    def __init__(self):
        super().__init__()
        self.device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        logger.info(f"using computing device: {self.device}")
        self.model = SequenceClassifier()
        self.model.eval()
        self.model.to(self.device)
        self.example = [[101, 2023, 2003, 1037, 8403, 4937, 999, 102] * 5] * INFERENCE_BATCH_SIZE

    def forward(self, data: List[T]) -> List[str]:
        tensors = [torch.tensor(token) for token in data]
        with torch.no_grad():
            result = self.model(torch.nn.utils.rnn.pad_sequence(tensors, batch_first=True))[0]  # expect: DL203
        scores = result.softmax(dim=1).cpu().tolist()
        return [f"positive={p}" for (_, p) in scores]

    def serialize(self, data: str) -> bytes:
        return data.encode()


if __name__ == "__main__":
    server = Server()
    server.append_worker(Preprocess)
    server.append_worker(Inference, max_batch_size=INFERENCE_BATCH_SIZE)
    print(server.run([b"a lovely film", b"this was not good at all"]))
