# source: https://github.com/shenweichen/DeepCTR-Torch/issues/240
# fixed twin: the masked lengths are copied to the host in the pack call, as the library's later dien.py does.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class InterestExtractor(nn.Module):
    def __init__(self, input_size):
        super().__init__()
        self.gru = nn.GRU(input_size=input_size, hidden_size=input_size, batch_first=True)

    def forward(self, keys, keys_length):
        batch_size, max_length, dim = keys.size()
        zero_outputs = torch.zeros(batch_size, max_length, dim, device=keys.device)
        mask = keys_length > 0
        masked_keys_length = keys_length[mask]
        if masked_keys_length.shape[0] == 0:
            return zero_outputs
        masked_keys = torch.masked_select(keys, mask.view(-1, 1, 1)).view(-1, max_length, dim)
        packed_keys = pack_padded_sequence(masked_keys, lengths=masked_keys_length.cpu(), batch_first=True, enforce_sorted=False)
        packed_interests, _ = self.gru(packed_keys)
        interests, _ = pad_packed_sequence(packed_interests, batch_first=True, total_length=max_length)
        zero_outputs[mask] = interests
        return zero_outputs


class DIEN(nn.Module):
    def __init__(self, n_items=20, dim=8, hist_len=5, device="cpu"):
        super().__init__()
        self.hist_len, self.device = hist_len, device
        self.embedding = nn.Embedding(n_items, dim, padding_idx=0)
        self.interest_extractor = InterestExtractor(dim)
        self.out = nn.Linear(2 * dim, 1)
        self.to(device)

    def forward(self, X):
        target = X[:, 0].long()
        hist = X[:, 1 : 1 + self.hist_len].long()
        keys_length = X[:, -1].long()
        interests = self.interest_extractor(self.embedding(hist), keys_length)
        pooled = interests.sum(1) / keys_length.clamp(min=1).unsqueeze(1)
        return torch.sigmoid(self.out(torch.cat([self.embedding(target), pooled], -1)))

    def fit(self, x, y, batch_size=4, epochs=1):
        optim = torch.optim.Adam(self.parameters())
        for _ in range(epochs):
            for i in range(0, len(x), batch_size):
                x_train = x[i : i + batch_size].to(self.device).float()
                y_train = y[i : i + batch_size].to(self.device).float()
                y_pred = self(x_train).squeeze()
                loss = nn.functional.binary_cross_entropy(y_pred, y_train)
                optim.zero_grad()
                loss.backward()
                optim.step()
        return loss.item()


if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    hist = torch.randint(1, 20, (8, 5))
    lengths = torch.tensor([5, 3, 0, 2, 4, 1, 5, 2])
    hist[torch.arange(5).unsqueeze(0) >= lengths.unsqueeze(1)] = 0
    x = torch.cat([torch.randint(1, 20, (8, 1)), hist, lengths.unsqueeze(1)], dim=1)
    y = torch.randint(0, 2, (8,))
    model = DIEN(device=device)
    print(model.fit(x, y))
