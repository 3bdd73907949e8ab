# source: https://github.com/bentrevett/pytorch-sentiment-analysis/issues/93
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the upgraded sentiment notebook's batch iterator is built with the training device and
#      returns each batch's token ids AND their lengths on it; the bidirectional LSTM classifier
#      packs its embedded input with those lengths, which pack_padded_sequence wants on the host.
#      The maintainer's fix in the thread (confirmed by the reporter) appends .cpu() to the lengths
#      in the pack call; that line is marked (no rule covers a GPU tensor passed where an op needs
#      the host; DL201 is the closest).
import torch
import torch.nn as nn


class BucketIterator:
    def __init__(self, examples, batch_size, device):
        self.examples, self.batch_size, self.device = examples, batch_size, device

    def __iter__(self):
        for i in range(0, len(self.examples), self.batch_size):
            chunk = sorted(self.examples[i : i + self.batch_size], key=lambda e: -len(e[0]))
            lengths = torch.tensor([len(tokens) for tokens, _ in chunk])
            text = torch.zeros(int(lengths.max()), len(chunk), dtype=torch.long)
            for j, (tokens, _) in enumerate(chunk):
                text[: len(tokens), j] = torch.tensor(tokens)
            label = torch.tensor([float(y) for _, y in chunk])
            yield (text.to(self.device), lengths.to(self.device)), label.to(self.device)


class RNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=2, bidirectional=True, dropout=0.5)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(0.5)

    def forward(self, text, text_lengths):
        embedded = self.dropout(self.embedding(text))
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths)  # expect: DL201
        packed_output, (hidden, cell) = self.rnn(packed_embedded)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)


def train(model, iterator, optimizer, criterion):
    model.train()
    epoch_loss = 0.0
    for (text, text_lengths), label in iterator:
        optimizer.zero_grad()
        predictions = model(text, text_lengths).squeeze(1)
        loss = criterion(predictions, label)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    return epoch_loss


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    g = torch.Generator().manual_seed(0)
    examples = [(torch.randint(2, 50, (int(n),), generator=g).tolist(), i % 2)
                for i, n in enumerate(torch.randint(3, 9, (16,), generator=g))]
    train_iterator = BucketIterator(examples, batch_size=4, device=device)
    model = RNN(50, 8, 16, 1, pad_idx=0)
    optimizer = torch.optim.Adam(model.parameters())
    criterion = nn.BCEWithLogitsLoss()
    model = model.to(device)
    criterion = criterion.to(device)
    print(train(model, train_iterator, optimizer, criterion))
