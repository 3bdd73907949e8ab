# source: https://github.com/bigdata-ustc/EduNLP/pull/110
# error: RNN fails on cuda: input on cuda:0, initial hidden state on the CPU
# bug: the language model's forward builds the initial hidden (and cell) state with
#      torch.zeros and no device, next to the embedded CUDA sequence.
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class LM(nn.Module):
    def __init__(self, rnn_type: str, vocab_size: int, embedding_dim: int, hidden_size: int, num_layers=1,
                 bidirectional=False, **kwargs):
        super(LM, self).__init__()
        rnn_type = rnn_type.upper()
        self.embedding = torch.nn.Embedding(vocab_size, embedding_dim)
        self.c = False
        if rnn_type == "RNN":
            self.rnn = torch.nn.RNN(embedding_dim, hidden_size, num_layers, bidirectional=bidirectional, **kwargs)
        elif rnn_type == "LSTM":
            self.rnn = torch.nn.LSTM(embedding_dim, hidden_size, num_layers, bidirectional=bidirectional, **kwargs)
            self.c = True
        elif rnn_type == "GRU":
            self.rnn = torch.nn.GRU(embedding_dim, hidden_size, num_layers, bidirectional=bidirectional, **kwargs)
        else:
            raise TypeError("Unknown rnn_type %s" % rnn_type)
        self.num_layers = num_layers * 2 if bidirectional else num_layers
        self.hidden_size = hidden_size

    def forward(self, seq_idx, seq_len):
        seq = self.embedding(seq_idx)
        pack = pack_padded_sequence(seq, seq_len, batch_first=True)
        h0 = torch.zeros(self.num_layers, seq.shape[0], self.hidden_size)  # expect: DL202
        if self.c is True:
            c0 = torch.zeros(self.num_layers, seq.shape[0], self.hidden_size)  # expect: DL202
            output, (hn, _) = self.rnn(pack, (h0, c0))
        else:
            output, hn = self.rnn(pack, h0)
        output, _ = pad_packed_sequence(output, batch_first=True)
        return output, hn
