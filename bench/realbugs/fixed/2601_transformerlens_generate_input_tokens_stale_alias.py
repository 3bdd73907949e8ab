# source: https://github.com/TransformerLensOrg/TransformerLens/issues/1508
# fixed twin: generate() re-binds input_tokens to the input after moving it to cfg.device (PR 1509), so the sampled tokens are appended to a tensor on the model's device.
from dataclasses import dataclass, field

import torch
import torch.nn as nn


@dataclass
class Config:
    d_vocab: int = 17
    d_model: int = 16
    device: str = field(default_factory=lambda: "cuda" if torch.cuda.is_available() else "cpu")


class TinyTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.d_vocab, cfg.d_model)
        self.block = nn.Linear(cfg.d_model, cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, cfg.d_vocab)
        self.to(cfg.device)

    def forward(self, tokens):
        return self.unembed(torch.relu(self.block(self.embed(tokens))))

    def to_tokens(self, text):
        return torch.tensor([[ord(c) % self.cfg.d_vocab for c in text]], device=self.cfg.device)

    @torch.no_grad()
    def generate(self, input, max_new_tokens=5, do_sample=True, freq_penalty=0.0):
        if isinstance(input, str):
            input = self.to_tokens(input)
            input_tokens = None
        else:
            input_tokens = input
        device = self.cfg.device
        input = input.to(device)
        if input_tokens is not None:
            input_tokens = input
        tokens = input
        for _ in range(max_new_tokens):
            logits = self(tokens)[:, -1, :]
            if do_sample:
                if freq_penalty > 0 and input_tokens is not None:
                    seen = torch.cat((input_tokens, tokens[:, input.shape[1]:]), dim=-1)
                    counts = torch.zeros_like(logits).scatter_add_(
                        1, seen.to(logits.device), torch.ones_like(seen, dtype=logits.dtype).to(logits.device))
                    logits = logits - freq_penalty * counts
                sampled = torch.multinomial(logits.softmax(dim=-1), 1).squeeze(-1)
            else:
                sampled = logits.argmax(dim=-1)
            tokens = torch.cat((tokens, sampled.unsqueeze(-1)), dim=-1)
        if input_tokens is not None:
            return torch.cat((input_tokens, tokens[:, input.shape[1]:]), dim=-1)
        return tokens


if __name__ == "__main__":
    model = TinyTransformer(Config())
    prompt = torch.tensor([[1, 2, 3, 4]])
    print(model.generate(prompt, do_sample=False).shape)
    print(model.generate(prompt, freq_penalty=0.5).shape)
