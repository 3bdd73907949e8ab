# source: https://github.com/spro/char-rnn.pytorch/issues/2
# error: AttributeError: 'tuple' object has no attribute 'cuda'
# bug: with --model lstm, init_hidden returns an (h, c) tuple, but the training step calls .cuda()
# on whatever it got back, as it does for the GRU's single hidden tensor.
import argparse

import torch
import torch.nn as nn
from torch.autograd import Variable


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, model="gru", n_layers=1):
        super(CharRNN, self).__init__()
        self.model = model.lower()
        self.hidden_size = hidden_size
        self.n_layers = n_layers
        self.encoder = nn.Embedding(input_size, hidden_size)
        if self.model == "gru":
            self.rnn = nn.GRU(hidden_size, hidden_size, n_layers)
        elif self.model == "lstm":
            self.rnn = nn.LSTM(hidden_size, hidden_size, n_layers)
        self.decoder = nn.Linear(hidden_size, output_size)

    def forward(self, input, hidden):
        batch_size = input.size(0)
        encoded = self.encoder(input)
        output, hidden = self.rnn(encoded.view(1, batch_size, -1), hidden)
        return self.decoder(output.view(batch_size, -1)), hidden

    def init_hidden(self, batch_size):
        if self.model == "lstm":
            return (Variable(torch.zeros(self.n_layers, batch_size, self.hidden_size)),
                    Variable(torch.zeros(self.n_layers, batch_size, self.hidden_size)))
        return Variable(torch.zeros(self.n_layers, batch_size, self.hidden_size))


argparser = argparse.ArgumentParser()
argparser.add_argument("--model", type=str, default="gru")
argparser.add_argument("--chunk_len", type=int, default=200)
argparser.add_argument("--batch_size", type=int, default=100)
argparser.add_argument("--cuda", action="store_true")
args = argparser.parse_args()

decoder = CharRNN(100, 100, 100, model=args.model)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
if args.cuda:
    decoder.cuda()


def train(inp, target):
    hidden = decoder.init_hidden(args.batch_size)
    if args.cuda:
        hidden = hidden.cuda()  # expect: DL310
    decoder.zero_grad()
    loss = 0
    for c in range(args.chunk_len):
        output, hidden = decoder(inp[:, c], hidden)
        loss += criterion(output.view(args.batch_size, -1), target[:, c])
    loss.backward()
    decoder_optimizer.step()
    return loss.item() / args.chunk_len
