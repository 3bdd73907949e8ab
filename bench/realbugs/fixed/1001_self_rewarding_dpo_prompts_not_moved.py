# source: https://github.com/lucidrains/self-rewarding-lm-pytorch/issues/15
# fixed twin: the generator is given the device; it moves the model and each repeated prompt tensor there before sampling (commit ec8b911).
import torch
import torch.nn as nn
import torch.nn.functional as F


def pick_device():
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


class TinyLM(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        return self.out(self.emb(ids))


def encode(text):
    return torch.tensor([ord(c) % 32 for c in text], dtype=torch.long)


@torch.no_grad()
def sample(model, prompts, seq_len):
    out = prompts
    for _ in range(seq_len):
        logits = model(out)[:, -1]
        nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)
        out = torch.cat((out, nxt), dim=-1)
    return out[:, prompts.shape[-1]:]


class SFTTrainer:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)

    def step(self, text):
        ids = encode(text).unsqueeze(0).to(self.device)
        loss = F.cross_entropy(self.model(ids[:, :-1]).transpose(1, 2), ids[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()


class DPODatasetGenerator(nn.Module):
    def __init__(self, model, prompts, device, num_candidates=2, max_len=4):
        super().__init__()
        self.model = model
        self.device = device
        self.prompts = prompts
        self.num_candidates = num_candidates
        self.max_len = max_len

    def forward(self):
        pairs = []
        prompt_tensors = [*map(encode, self.prompts)]
        model = self.model.to(self.device)
        for prompt_tensor in prompt_tensors:
            repeated = prompt_tensor.unsqueeze(0).repeat(self.num_candidates, 1)
            repeated = repeated.to(self.device)
            responses = sample(model, prompts=repeated, seq_len=self.max_len)
            pairs.append(torch.cat((repeated, responses), dim=-1))
        return pairs


def main():
    device = pick_device()
    model = TinyLM()
    sft = SFTTrainer(model, device)
    sft.step("hello world")
    generator = DPODatasetGenerator(model, ["what is two", "say hi"], device)
    pairs = generator()
    print(len(pairs), tuple(pairs[0].shape))


if __name__ == "__main__":
    main()
