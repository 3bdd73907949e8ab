# source: https://github.com/haoyangzheng-ai/didi-instruct/issues/1
# error: RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu! (metrics.py, in update: self.weight += weight.sum())
# bug: the diffusion LM keeps its evaluation metrics in a plain helper object (not a submodule),
#      so the trainer's move of the LightningModule to the GPU never reaches the generative
#      perplexity metric, whose running sums stay on the host. Sample evaluation scores the
#      generated text with the evaluation LM on the GPU and hands the per-token NLLs and the
#      valid-token mask to the metric's update, where the sums meet GPU values. The issue (open)
#      gives the reporter's fix: update moves its inputs to the sums' device (the two changed lines),
#      and the caller moves the metric to the NLLs' device before updating (an inserted line; the
#      update call it precedes is marked). Three markers, DL201: the unmoved metric's state
#      meeting GPU tensors.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MeanMetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean_value", torch.tensor(0.0))
        self.register_buffer("weight", torch.tensor(0.0))

    def compute(self):
        return self.mean_value / self.weight


class NLL(MeanMetric):
    def update(self, value, weight):
        self.mean_value += value.sum()  # expect: DL201
        self.weight += weight.sum()  # expect: DL201


class Perplexity(NLL):
    def compute(self):
        return torch.exp(self.mean_value / self.weight)


class Metrics:
    def __init__(self):
        self.gen_ppl = Perplexity()
        self.gen_entropy = []

    def record_generative_perplexity(self, texts, eval_lm, device):
        ids = texts.to(device)
        with torch.no_grad():
            logits = eval_lm(ids[:, :-1])
        nlls = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        valid_tokens = (ids[:, 1:] != 0).float()
        self.gen_ppl.update(nlls * valid_tokens, valid_tokens)  # expect: DL201


class TinyLM(nn.Module):
    def __init__(self, vocab=64, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(torch.tanh(self.emb(ids)))


class Diffusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = TinyLM()
        self.metrics = Metrics()

    def sample(self, n, length):
        return torch.randint(1, 64, (n, length), device=self.backbone.out.weight.device)


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Diffusion().to(device)
    eval_lm = TinyLM().to(device).eval()
    for _ in range(2):
        samples = model.sample(4, 16)
        model.metrics.record_generative_perplexity(samples, eval_lm, device)
    ppl = model.metrics.gen_ppl.compute().item()
    print(round(ppl, 2), math.isfinite(ppl))
