# source: https://github.com/artetxem/undreamt/issues/14
# error: TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first. (in np.exp(self.loss/self.trg_word_count))
# bug: the trainer sums each step's loss with loss.data[0], written for PyTorch 0.3 where that gave a
#      Python float; on PyTorch >= 0.4 it is a CUDA tensor, so the running loss becomes a GPU tensor and
#      the perplexity log line hands it to np.exp. The issue is open with no fix; the line the traceback
#      points to is marked (DL204: numpy on a GPU tensor).
import numpy as np
import torch
import torch.nn as nn


class Translator(nn.Module):
    def __init__(self, vocab=40, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.out = nn.Linear(hidden, vocab)

    def score(self, src, trg):
        logits = self.out(self.embed(src))
        loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), trg.view(-1), reduction="sum")
        return loss.view(1)


class Trainer:
    def __init__(self, translator, device, batch_size=4):
        self.translator = translator
        self.device = device
        self.batch_size = batch_size
        self.optimizer = torch.optim.SGD(translator.parameters(), lr=0.1)
        self.reset_stats()

    def step(self):
        src = torch.randint(0, 40, (self.batch_size, 7), device=self.device)
        trg = torch.randint(0, 40, (self.batch_size, 7), device=self.device)
        self.trg_word_count += trg.numel()
        loss = self.translator.score(src, trg)
        self.loss += loss.data[0]
        self.optimizer.zero_grad()
        loss.div(self.batch_size).backward()
        self.optimizer.step()

    def reset_stats(self):
        self.trg_word_count = 0
        self.loss = 0

    def perplexity_per_word(self):
        return np.exp(self.loss / self.trg_word_count)  # expect: DL204


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(Translator().to(device), device)
    for _ in range(3):
        trainer.step()
    print("perplexity {:.2f}".format(trainer.perplexity_per_word()))
