# source: https://github.com/1rgs/jsonformer/issues/9
# fixed twin: every prompt tensor is moved to self.model.device before the model sees it (commit 3c06fe0), so the GPU model gets GPU token ids.
import json
from typing import Any, Dict

import torch
import torch.nn as nn

GENERATION_MARKER = "|GENERATION|"


class CharTokenizer:
    vocab = list('0123456789.", abcdefghijklmnopqrstuvwxyz{}:[]|') + ["true", "false", "<eos>"]

    def encode(self, text, return_tensors=None):
        ids = [self.vocab.index(c) if c in self.vocab else 0 for c in text.lower()[-32:]]
        return torch.tensor([ids]) if return_tensors == "pt" else ids

    def decode(self, ids):
        return "".join(self.vocab[i] for i in ids if i < len(self.vocab) - 1)

    def convert_tokens_to_ids(self, token):
        return self.vocab.index(token)


class TinyLM(nn.Module):
    def __init__(self, vocab=len(CharTokenizer.vocab), hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.head = nn.Linear(hidden, vocab)

    @property
    def device(self):
        return self.head.weight.device

    def forward(self, input_ids):
        return self.head(self.embed(input_ids).cumsum(dim=1))

    @torch.no_grad()
    def generate(self, input_ids, max_new_tokens=4):
        for _ in range(max_new_tokens):
            next_id = self(input_ids)[:, -1].argmax(dim=-1, keepdim=True)
            input_ids = torch.cat([input_ids, next_id], dim=1)
        return input_ids


class Jsonformer:
    def __init__(self, model, tokenizer, json_schema: Dict[str, Any], prompt: str, max_number_tokens=6):
        self.model = model
        self.tokenizer = tokenizer
        self.json_schema = json_schema
        self.prompt = prompt
        self.max_number_tokens = max_number_tokens
        self.value: Dict[str, Any] = {}

    def get_prompt(self):
        progress = json.dumps(self.value)
        return self.prompt + progress[: progress.index(GENERATION_MARKER)]

    def generate_number(self):
        prompt = self.get_prompt()
        response = self.model.generate(
            self.tokenizer.encode(prompt, return_tensors="pt").to(self.model.device),
            max_new_tokens=self.max_number_tokens,
        )
        text = self.tokenizer.decode(response[0].tolist())[len(prompt):]
        digits = "".join(c for c in text if c.isdigit())
        return float(digits) if digits else 0.0

    def generate_boolean(self):
        prompt = self.get_prompt()
        input_tensor = self.tokenizer.encode(prompt, return_tensors="pt")
        logits = self.model.forward(input_tensor.to(self.model.device))[0, -1]
        true_id = self.tokenizer.convert_tokens_to_ids("true")
        false_id = self.tokenizer.convert_tokens_to_ids("false")
        return bool(logits[true_id] > logits[false_id])

    def generate_string(self):
        prompt = self.get_prompt() + '"'
        response = self.model.generate(
            self.tokenizer.encode(prompt, return_tensors="pt").to(self.model.device),
            max_new_tokens=6,
        )
        return self.tokenizer.decode(response[0].tolist())[len(prompt):].split('"')[0]

    def __call__(self):
        generators = {"number": self.generate_number, "boolean": self.generate_boolean,
                      "string": self.generate_string}
        for key, schema in self.json_schema["properties"].items():
            self.value[key] = GENERATION_MARKER
            self.value[key] = generators[schema["type"]]()
        return self.value


if __name__ == "__main__":
    model = TinyLM()
    if torch.cuda.is_available():
        model = model.half().cuda()
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "number"},
                                               "is_student": {"type": "boolean"}}}
    print(Jsonformer(model, CharTokenizer(), schema, "a person: ")())
