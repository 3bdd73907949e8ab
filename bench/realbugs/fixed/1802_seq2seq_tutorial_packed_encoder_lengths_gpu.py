# source: https://github.com/bentrevett/pytorch-seq2seq/issues/156
# fixed twin: the encoder packs the embedded source with the lengths moved to the CPU (src_len.to('cpu')).
import random

import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, vocab, emb_dim, enc_hid, dec_hid):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim)
        self.rnn = nn.GRU(emb_dim, enc_hid, bidirectional=True)
        self.fc = nn.Linear(enc_hid * 2, dec_hid)
        self.dropout = nn.Dropout(0.1)

    def forward(self, src, src_len):
        embedded = self.dropout(self.embedding(src))
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len.to('cpu'))
        packed_outputs, hidden = self.rnn(packed_embedded)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)
        hidden = torch.tanh(self.fc(torch.cat((hidden[-2], hidden[-1]), dim=1)))
        return outputs, hidden


class Seq2Seq(nn.Module):
    def __init__(self, encoder, out_vocab, dec_hid):
        super().__init__()
        self.encoder = encoder
        self.out = nn.Linear(dec_hid, out_vocab)

    def forward(self, src, src_len, trg):
        _, hidden = self.encoder(src, src_len)
        return self.out(hidden).unsqueeze(0).expand(trg.shape[0], -1, -1)


def bucket_iterator(n_batches, batch_size, vocab, device):
    for _ in range(n_batches):
        lengths = sorted((random.randint(2, 9) for _ in range(batch_size)), reverse=True)
        src = torch.zeros(max(lengths), batch_size, dtype=torch.long)
        for j, n in enumerate(lengths):
            src[:n, j] = torch.randint(1, vocab, (n,))
        trg = torch.randint(1, vocab, (6, batch_size))
        yield (src.to(device), torch.tensor(lengths).to(device)), trg.to(device)


def train(model, iterator, optimizer, criterion):
    model.train()
    for (src, src_len), trg in iterator:
        optimizer.zero_grad()
        output = model(src, src_len, trg)
        loss = criterion(output.reshape(-1, output.shape[-1]), trg.reshape(-1))
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Seq2Seq(Encoder(20, 8, 16, 16), 20, 16).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    print(train(model, bucket_iterator(3, 4, 20, device), optimizer, nn.CrossEntropyLoss()))
