# source: https://github.com/vaibkumr/prompt-optimizer/issues/3
# fixed twin: the input ids are copied to the host before .numpy(), as PR #4 does.
import numpy as np
import torch
import torch.nn as nn


class ToyTokenizer:
    def __init__(self, vocab):
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}

    def encode_plus(self, sentence, return_tensors="pt", add_special_tokens=False):
        ids = torch.tensor([[self.index.get(w, 0) for w in sentence.split()]])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def decode(self, ids):
        return " ".join(self.vocab[int(i)] for i in ids)


class ToyMaskedLM(nn.Module):
    def __init__(self, vocab_size, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, attention_mask=None):
        h = self.embed(input_ids) * attention_mask.unsqueeze(-1)
        return type("Out", (), {"logits": self.head(h)})()


class EntropyOptim:
    def __init__(self, vocab, p=0.5):
        self.p = p * 100
        self.tokenizer = ToyTokenizer(vocab)
        self.model = ToyMaskedLM(len(vocab))
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)

    def generate_confidence_values(self, sentence):
        inputs = self.tokenizer.encode_plus(sentence, return_tensors="pt", add_special_tokens=False)
        input_ids = inputs["input_ids"].to(self.device)
        attention_mask = inputs["attention_mask"].to(self.device)
        with torch.no_grad():
            logits = self.model(input_ids, attention_mask=attention_mask).logits[0]
        probs = torch.softmax(logits, dim=-1)
        entropy_mapping = []
        for i, input_id in enumerate(input_ids[0].detach().cpu().numpy()):
            entropy = -torch.log2(probs[i, input_id]).detach().item()
            entropy_mapping.append((input_id, entropy))
        return entropy_mapping

    def run(self, prompt):
        mapping = self.generate_confidence_values(prompt)
        cutoff = np.percentile([m[1] for m in mapping], self.p)
        return self.tokenizer.decode([m[0] for m in mapping if m[1] >= cutoff])


if __name__ == "__main__":
    vocab = "<unk> the a cat dog sat on mat quickly very small red".split()
    print(EntropyOptim(vocab).run("the very small red cat sat on the mat quickly"))
