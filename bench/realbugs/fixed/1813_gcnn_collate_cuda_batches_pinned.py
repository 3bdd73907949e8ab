# source: https://github.com/DavidWBressler/GCNN/issues/2
# fixed twin: both loaders are created with pin_memory=False (the collate function already returns device tensors), as the reporter's fix in the thread does.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, RandomSampler

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TextDataset(Dataset):
    def __init__(self, n=40, vocab=50):
        self.items = [(torch.randint(2, vocab, (int(torch.randint(3, 12, (1,))),)).tolist(), torch.rand(1)) for _ in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def pad_collate_GCNN(samples, pad_idx=1):
    max_len = max(len(s[0]) for s in samples)
    res = torch.zeros(max_len, len(samples)).long() + pad_idx
    for i, s in enumerate(samples):
        res[: len(s[0]), i] = torch.LongTensor(s[0])
    labels = torch.stack([s[1] for s in samples], dim=0).squeeze().to(DEVICE)
    return res.to(DEVICE), labels


class GCNN(nn.Module):
    def __init__(self, vocab=50, emb=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.conv = nn.Conv1d(emb, 2 * emb, 3, padding=1)
        self.out = nn.Linear(emb, 1)

    def forward(self, x):
        h = nn.functional.glu(self.conv(self.emb(x).permute(1, 2, 0)), dim=1)
        return torch.sigmoid(self.out(h.mean(2))).squeeze(-1)


def model_fit(model, traindataset, validdataset, bs=8):
    train_loader = DataLoader(traindataset, batch_size=bs, collate_fn=pad_collate_GCNN, pin_memory=False, sampler=RandomSampler(traindataset))
    val_loader = DataLoader(validdataset, batch_size=bs, collate_fn=pad_collate_GCNN, pin_memory=False)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in train_loader:
        loss = nn.functional.binary_cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return sum(nn.functional.binary_cross_entropy(model(x), y).item() for x, y in val_loader)


if __name__ == "__main__":
    print(model_fit(GCNN().to(DEVICE), TextDataset(), TextDataset(16)))
