# source: https://github.com/TransformerLensOrg/TransformerLens/issues/1508
# error: RuntimeError: Expected all tensors to be on the same device, but got tensors is on cuda:0, different from other tensors on cpu (when checking argument in method wrapper_CUDA_cat)
# bug: generate() accepts a token tensor and keeps a second name for it (input_tokens) so it can
#      append the sampled tokens and apply the frequency penalty. The name is bound before the input
#      is moved to the model's device (cfg.device, "cuda" whenever a GPU exists), so it still points
#      at the caller's CPU tensor while every sampled token is made on the GPU; both torch.cat calls
#      that extend input_tokens mix the devices. The fix (PR 1509) re-binds input_tokens to the moved
#      input right after the move - an inserted line, so the two torch.cat lines the traceback points
#      to are marked (DL201: operands on different devices).
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
        tokens = input
        for _ in range(max_new_tokens):
            logits = self(tokens)[:, -1, :]
            if do_sample:
                if freq_penalty > 0 and input_tokens is not None:
                    seen = torch.cat((input_tokens, tokens[:, input.shape[1]:]), dim=-1)  # expect: DL201
                    counts = torch.zeros_like(logits).scatter_add_(
                        1, seen.to(logits.device), torch.ones_like(seen, dtype=logits.dtype).to(logits.device))
                    logits = logits - freq_penalty * counts
                sampled = torch.multinomial(logits.softmax(dim=-1), 1).squeeze(-1)
            else:
                sampled = logits.argmax(dim=-1)
            tokens = torch.cat((tokens, sampled.unsqueeze(-1)), dim=-1)
        if input_tokens is not None:
            return torch.cat((input_tokens, tokens[:, input.shape[1]:]), dim=-1)  # expect: DL201
        return tokens


if __name__ == "__main__":
    model = TinyTransformer(Config())
    prompt = torch.tensor([[1, 2, 3, 4]])
    print(model.generate(prompt, do_sample=False).shape)
    print(model.generate(prompt, freq_penalty=0.5).shape)
