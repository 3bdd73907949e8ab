# source: https://github.com/KyleGoyette/nnRNN/issues/4
# fixed twin: commit 533e91b ("remove cuda commenting in batchify") restores `if args.cuda: data = data.cuda()` in batchify.
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, path):
        self.dictionary = Dictionary()
        self.train = self.tokenize(os.path.join(path, 'train.txt'), 5000)
        self.valid = self.tokenize(os.path.join(path, 'valid.txt'), 500)
        self.test = self.tokenize(os.path.join(path, 'test.txt'), 500)

    def tokenize(self, path, tokens):
        """Tokenizes a text file (stand-in: `tokens` random characters instead of the file's)."""
        chars = 'abcdefghijklmnopqrstuvwxyz_'
        ids = torch.LongTensor(tokens)
        for token, i in enumerate(torch.randint(0, len(chars), (tokens,)).tolist()):
            ids[token] = self.dictionary.add_word(chars[i])
        return ids


class RNNCell(nn.Module):
    def __init__(self, inp_size, hid_size):
        super(RNNCell, self).__init__()
        self.U = nn.Linear(inp_size, hid_size)
        self.V = nn.Linear(hid_size, hid_size, bias=False)
        self.hidden_size = hid_size
        self.params = list(self.U.parameters()) + list(self.V.parameters())

    def forward(self, x, hidden):
        if hidden is None:
            hidden = x.new_zeros(x.shape[0], self.hidden_size)
        return torch.tanh(self.U(x) + self.V(hidden))


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn, ntoken, ninp, nhid, tie_weights=False):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = rnn
        self.decoder = nn.Linear(nhid, ntoken)
        self.params = rnn.params + [self.encoder.weight, self.decoder.weight, self.decoder.bias]
        self.nhid = nhid

    def forward(self, input, hidden):
        emb = self.encoder(input)
        hs = []
        for i in range(emb.shape[0]):
            hidden = self.rnn(emb[i], hidden)
            hs.append(hidden)
        output = torch.stack(hs)
        decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
        return decoded.view(output.size(0), output.size(1), decoded.size(1)), hidden


parser = argparse.ArgumentParser(description='PyTorch PennTreeBank RNN/LSTM Language Model')
parser.add_argument('--emsize', type=int, default=32, help='size of word embeddings')
parser.add_argument('--nhid', type=int, default=64, help='number of hidden units per layer')
parser.add_argument('--bptt', type=int, default=150, help='sequence length')
parser.add_argument('--cuda', action='store_true', default=False, help='use cuda')
parser.add_argument('--seed', type=int, default=400, help='random seed')
parser.add_argument('--batch', type=int, default=128, metavar='N', help='batch size')
parser.add_argument('--lr', type=float, default=0.0008)
args = parser.parse_args()

np.random.seed(args.seed)
torch.manual_seed(args.seed)

corpus = Corpus('./data/pennchar/')


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    if args.cuda:
        data = data.cuda()
    return data


eval_batch_size = 10
train_data = batchify(corpus.train, args.batch)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)

ntokens = len(corpus.dictionary)
rnn = RNNCell(args.emsize, args.nhid)
model = RNNModel(rnn, ntokens, args.emsize, args.nhid)
if args.cuda:
    model.cuda()

criterion = nn.CrossEntropyLoss()


def get_batch(source, i, evaluation=False):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def train(optimizer):
    model.train()
    total_loss = 0
    hidden = None
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        if hidden is not None:
            hidden = hidden.detach()
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    return total_loss


optimizer = optim.RMSprop(model.parameters(), lr=args.lr, alpha=0.9)
print(train(optimizer))
