# source: https://github.com/Seanny123/da-rnn/issues/22
# error: RuntimeError: All input tensors must be on the same device. Received cpu and cuda:0
# bug: the encoder's initial hidden/cell states (init_hidden) and its output buffers are made
#      with torch.zeros and no device; on a GPU torch.cat then joins CPU states with the CUDA
#      input window.
import torch
from torch import nn
from torch.autograd import Variable
from torch.nn import functional as tf


def init_hidden(x, hidden_size: int):
    return Variable(torch.zeros(1, x.size(0), hidden_size))  # expect: DL202


class Encoder(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, T: int):
        super(Encoder, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.T = T
        self.lstm_layer = nn.LSTM(input_size=input_size, hidden_size=hidden_size, num_layers=1)
        self.attn_linear = nn.Linear(in_features=2 * hidden_size + T - 1, out_features=1)

    def forward(self, input_data):
        input_weighted = Variable(torch.zeros(input_data.size(0), self.T - 1, self.input_size))  # expect: DL202
        input_encoded = Variable(torch.zeros(input_data.size(0), self.T - 1, self.hidden_size))  # expect: DL202
        hidden = init_hidden(input_data, self.hidden_size)
        cell = init_hidden(input_data, self.hidden_size)
        for t in range(self.T - 1):
            x = torch.cat((hidden.repeat(self.input_size, 1, 1).permute(1, 0, 2),
                           cell.repeat(self.input_size, 1, 1).permute(1, 0, 2),
                           input_data.permute(0, 2, 1)), dim=2)
            x = self.attn_linear(x.view(-1, self.hidden_size * 2 + self.T - 1))
            attn_weights = tf.softmax(x.view(-1, self.input_size), dim=1)
            weighted_input = torch.mul(attn_weights, input_data[:, t, :])
            self.lstm_layer.flatten_parameters()
            _, lstm_states = self.lstm_layer(weighted_input.unsqueeze(0), (hidden, cell))
            hidden = lstm_states[0]
            cell = lstm_states[1]
            input_weighted[:, t, :] = weighted_input
            input_encoded[:, t, :] = hidden
        return input_weighted, input_encoded


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
encoder = Encoder(input_size=81, hidden_size=64, T=10).to(device)
input_weighted, input_encoded = encoder(torch.randn(128, 9, 81).to(device))
