# source: https://github.com/bigscience-workshop/lm-evaluation-harness/pull/72
# fixed twin: both token batches are moved to the model's device before the model call (PR 72).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchEncoding(dict):
    def to(self, device):
        return BatchEncoding({k: v.to(device) for k, v in self.items()})


class Tokenizer:
    def __call__(self, texts):
        rows = [[sum(map(ord, w)) % 90 + 1 for w in t.split()] for t in texts]
        width = max(len(r) for r in rows)
        ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
        return BatchEncoding({"input_ids": ids, "attention_mask": (ids != 0).long()})


class Seq2SeqOutput:
    def __init__(self, logits):
        self.logits = logits


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=96, dim=16):
        super().__init__()
        self.shared = nn.Embedding(vocab, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids, attention_mask, labels):
        enc = (self.shared(input_ids) * attention_mask[..., None]).mean(dim=1, keepdim=True)
        return Seq2SeqOutput(self.lm_head(self.shared(labels) + enc))


class AutoSeq2SeqLM:
    def __init__(self, device="cuda", batch_size=2):
        self.tokenizer = Tokenizer()
        self.model = TinySeq2Seq()
        self.model.eval()
        torch.set_grad_enabled(False)
        self.batch_size = batch_size
        self._device = torch.device(device)
        self.model.to(self._device)

    @property
    def device(self):
        return self._device

    def loglikelihood(self, requests):
        new_reqs = []
        for start in range(0, len(requests), self.batch_size):
            context, continuation = zip(*requests[start:start + self.batch_size])
            new_reqs.append(((context, continuation), self.tokenizer(list(context)), self.tokenizer(list(continuation))))
        return self._loglikelihood_tokens(new_reqs)

    def _loglikelihood_tokens(self, requests):
        res = []
        for chunk in requests:
            cache_keys, inputs_tok, targets_tok = chunk
            inputs_tok = inputs_tok.to(self.device)
            targets_tok = targets_tok.to(self.device)
            outputs = self._model_call(inputs_tok, targets_tok)
            log_softmaxes = F.log_softmax(outputs.logits, dim=-1)
            for log_softmax, target_tok, target_mask in zip(log_softmaxes, targets_tok["input_ids"], targets_tok["attention_mask"]):
                length = target_mask.sum()
                log_softmax, target_tok = log_softmax[:length], target_tok[:length]
                target_logits = torch.gather(log_softmax, 1, target_tok.unsqueeze(-1)).squeeze(-1)
                res.append((float(target_logits.sum()), bool((log_softmax.argmax(dim=-1) == target_tok).all())))
        return res

    def _model_call(self, inputs_tok, targets_tok):
        return self.model(**inputs_tok, labels=targets_tok["input_ids"])


if __name__ == "__main__":
    lm = AutoSeq2SeqLM(device="cuda" if torch.cuda.is_available() else "cpu")
    reqs = [("the cat sat on", "the mat"), ("paris is the capital of", "france"), ("one two", "three")]
    print([round(ll, 2) for ll, _ in lm.loglikelihood(reqs)], math.isfinite(lm.loglikelihood(reqs)[0][0]))
