# source: https://github.com/databrickslabs/dolly/pull/180
# fixed twin: the attention mask is moved to the model's device next to the ids, as the fix (PR 180, commit 5021d94) does.
import torch
import torch.nn as nn


class ToyTokenizer:
    pad_token_id = 0

    def __call__(self, text, return_tensors="pt"):
        ids = [1 + (ord(ch) % 30) for ch in text]
        return {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}

    def decode(self, ids):
        return " ".join(str(i) for i in ids)


class ToyCausalLM(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    @property
    def device(self):
        return self.embed.weight.device

    def forward(self, input_ids, attention_mask):
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        return self.head(h.sum(1) / attention_mask.sum(1, keepdim=True))

    @torch.no_grad()
    def generate(self, input_ids, attention_mask, pad_token_id, max_new_tokens=4):
        for _ in range(max_new_tokens):
            next_id = self(input_ids, attention_mask).argmax(-1, keepdim=True)
            input_ids = torch.cat([input_ids, next_id], dim=1)
            attention_mask = torch.cat([attention_mask, torch.ones_like(next_id)], dim=1)
        return input_ids


class InstructionTextGenerationPipeline:
    def __init__(self, model, tokenizer):
        self.model = model
        self.tokenizer = tokenizer

    def preprocess(self, instruction_text):
        inputs = self.tokenizer("### Instruction: " + instruction_text + " ### Response:", return_tensors="pt")
        inputs["instruction_text"] = instruction_text
        return inputs

    def _forward(self, model_inputs, **generate_kwargs):
        input_ids = model_inputs["input_ids"]
        attention_mask = model_inputs.get("attention_mask", None)
        generated_sequence = self.model.generate(
            input_ids=input_ids.to(self.model.device),
            attention_mask=attention_mask.to(self.model.device),
            pad_token_id=self.tokenizer.pad_token_id,
            **generate_kwargs,
        )
        return {"generated_sequence": generated_sequence.cpu(), "input_ids": input_ids}

    def __call__(self, instruction_text, **generate_kwargs):
        out = self._forward(self.preprocess(instruction_text), **generate_kwargs)
        return self.tokenizer.decode(out["generated_sequence"][0, out["input_ids"].shape[1]:].tolist())


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ToyCausalLM().to(device)
    pipe = InstructionTextGenerationPipeline(model=model, tokenizer=ToyTokenizer())
    print(pipe("Explain device placement."))
