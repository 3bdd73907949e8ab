# source: https://github.com/dvruette/figaro/pull/11
# fixed twin: the description bar ids and the current-bar tracker are moved to the model's device (commit 85f54ac).
import torch
import torch.nn as nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab=24, dim=16, context_size=6, description_flavor="description"):
        super().__init__()
        self.context_size = context_size
        self.description_flavor = description_flavor
        self.tok = nn.Embedding(vocab, dim)
        self.desc = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, vocab)

    @property
    def device(self):
        return next(self.parameters()).device

    def step(self, x, z):
        h = self.tok(x) + self.desc(z).mean(dim=1, keepdim=True)
        return self.head(h)[:, -1]

    @torch.no_grad()
    def sample(self, batch, max_length=10):
        batch_size, curr_len = batch["input_ids"].shape
        x, bar_ids = batch["input_ids"], batch["bar_ids"]
        if self.description_flavor == "both":
            z = {"latents": batch["latents"], "description": batch["description"]}
            desc_bar_ids = batch["desc_bar_ids"].to(self.device)
        elif self.description_flavor == "description":
            z, desc_bar_ids = batch["description"], batch["desc_bar_ids"].to(self.device)
        else:
            z, desc_bar_ids = None, None

        curr_bars = torch.zeros(batch_size).to(self.device).fill_(-1)
        for i in range(curr_len - 1, max_length):
            x_ = x[:, -self.context_size:].to(self.device)
            bar_ids_ = bar_ids[:, -self.context_size:].to(self.device)
            desc = z if self.description_flavor == "description" else z["description"]
            next_bars = bar_ids_[:, 0]
            bars_changed = not (next_bars == curr_bars).all()
            curr_bars = next_bars
            if bars_changed:
                z_ = torch.zeros(batch_size, self.context_size, dtype=torch.long)
                for j in range(batch_size):
                    indices = torch.nonzero(desc_bar_ids[j] == bar_ids_[j, 0])
                    idx = indices[0, 0] if indices.size(0) > 0 else desc.size(1) - 1
                    offset = min(self.context_size, desc.size(1) - int(idx))
                    z_[j, :offset] = desc[j, idx:idx + offset]
                z_ = z_.to(self.device)
            nxt = self.step(x_, z_).argmax(dim=-1, keepdim=True).cpu()
            x = torch.cat([x, nxt], dim=1)
            bar_ids = torch.cat([bar_ids, bar_ids[:, -1:] + (i % 4 == 3)], dim=1)
        return x


def load_model(device="auto"):
    if device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Seq2Seq()
    model.to(device)
    model.eval()
    return model


def make_batch(batch_size=2, length=4, desc_len=8):
    return {
        "input_ids": torch.randint(0, 24, (batch_size, length)),
        "bar_ids": torch.zeros(batch_size, length, dtype=torch.long),
        "description": torch.randint(0, 24, (batch_size, desc_len)),
        "desc_bar_ids": torch.arange(desc_len).repeat(batch_size, 1) // 2,
    }


def reconstruct_sample(model, batch, initial_context=2):
    batch_ = {key: batch[key][:, :initial_context] for key in ["input_ids", "bar_ids"]}
    batch_["description"] = batch["description"]
    batch_["desc_bar_ids"] = batch["desc_bar_ids"]
    return model.sample(batch_)


if __name__ == "__main__":
    model = load_model()
    print(tuple(reconstruct_sample(model, make_batch()).shape))
