# source: https://github.com/huggingface/transformers/pull/34076
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (in a logits processor / when finishing sequences)
# bug: with a model spread over several GPUs (device_map), users move their inputs to model.device,
#      the device of the first parameter - the embedding's GPU - while the logits come out of the
#      lm_head on the last GPU. The sampling loop builds its helpers (unfinished_sequences, the
#      logits processors' gathers over input_ids) on input_ids' device and feeds them the logits from
#      the other GPU. The merged fix inserts next_token_logits = next_token_logits.to(input_ids.device)
#      right after the logits are taken; the marked line is the one the inserted line precedes, where
#      the logits first meet input_ids (DL201: operands on different devices).
import torch
import torch.nn as nn


def split_devices():
    if torch.cuda.device_count() > 1:
        return torch.device("cuda:0"), torch.device("cuda:1")
    return torch.device("cpu"), torch.device("cpu")


class RepetitionPenaltyLogitsProcessor:
    def __init__(self, penalty):
        self.penalty = penalty

    def __call__(self, input_ids, scores):
        score = torch.gather(scores, 1, input_ids)
        score = torch.where(score < 0, score * self.penalty, score / self.penalty)
        return scores.scatter(1, input_ids, score)


class SplitCausalLM(nn.Module):
    def __init__(self, vocab=32, hidden=16, device_map=None):
        super().__init__()
        first, last = device_map
        self.embed = nn.Embedding(vocab, hidden).to(first)
        self.body = nn.Linear(hidden, hidden).to(first)
        self.lm_head = nn.Linear(hidden, vocab).to(last)

    @property
    def device(self):
        return next(self.parameters()).device

    def forward(self, input_ids):
        hidden = torch.tanh(self.body(self.embed(input_ids)))
        return self.lm_head(hidden.to(self.lm_head.weight.device))

    @torch.no_grad()
    def generate(self, input_ids, max_new_tokens=4, pad_token_id=0, eos_token_id=1, logits_processor=()):
        batch_size = input_ids.shape[0]
        unfinished_sequences = torch.ones(batch_size, dtype=torch.long, device=input_ids.device)
        for _ in range(max_new_tokens):
            logits = self(input_ids)
            next_token_logits = logits.clone()[:, -1, :].float()
            next_token_scores = next_token_logits
            for processor in logits_processor:
                next_token_scores = processor(input_ids, next_token_scores)  # expect: DL201
            next_tokens = torch.argmax(next_token_scores, dim=-1)
            next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            unfinished_sequences = unfinished_sequences & (next_tokens != eos_token_id).long()
            if unfinished_sequences.max() == 0:
                break
        return input_ids


if __name__ == "__main__":
    model = SplitCausalLM(device_map=split_devices())
    inputs = torch.tensor([[5, 6, 7], [8, 9, 10]]).to(model.device)
    out = model.generate(inputs, logits_processor=[RepetitionPenaltyLogitsProcessor(1.2)])
    print(out.tolist())
