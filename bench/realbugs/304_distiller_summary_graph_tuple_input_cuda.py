# source: https://github.com/IntelLabs/distiller/issues/155
# error: AttributeError: 'tuple' object has no attribute 'cuda'
# bug: the word language model's dummy input for the graph summary is an (input, hidden) tuple, but
# SummaryGraph moves its dummy input with .cuda() as if it were one tensor.
import torch
import torch.jit as jit
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super(RNNModel, self).__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.encoder(input), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


class SummaryGraph(object):
    def __init__(self, model, dummy_input):
        with torch.onnx.set_training(model, False):
            trace, _ = jit.get_trace_graph(model, dummy_input.cuda())  # expect: DL310
            self.graph = trace.graph()


def draw_lang_model_to_file(model, png_fname, dataset):
    if dataset == "wikitext2":
        seq_len, batch_size = 35, 20
        dummy_input = torch.randint(0, 33278, (seq_len, batch_size), dtype=torch.long).cuda()
        hidden = model.init_hidden(batch_size)
        dummy_input = (dummy_input, hidden)
        g = SummaryGraph(model, dummy_input)
        return g


model = RNNModel(33278, 1500, 1500, 2).cuda()
draw_lang_model_to_file(model, "rnn.png", "wikitext2")
