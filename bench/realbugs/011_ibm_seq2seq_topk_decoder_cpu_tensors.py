# source: https://github.com/IBM/pytorch-seq2seq/issues/102
# error: mismatches between torch.FloatTensor and torch.cuda.FloatTensor when the encoder runs on the GPU
# bug: the beam-search decoder builds its beam offsets, initial scores, start symbols and the
#      final hidden-state placeholder with CPU tensor constructors inside forward, then feeds
#      them to the (CUDA) decoder RNN and combines them with its CUDA outputs.
import torch
import torch.nn.functional as F
from torch.autograd import Variable


def _inflate(tensor, times, dim):
    repeat_dims = [1] * tensor.dim()
    repeat_dims[dim] = times
    return tensor.repeat(*repeat_dims)


class TopKDecoder(torch.nn.Module):
    def __init__(self, decoder_rnn, k):
        super(TopKDecoder, self).__init__()
        self.rnn = decoder_rnn
        self.k = k
        self.V = self.rnn.output_size
        self.SOS = self.rnn.sos_id
        self.EOS = self.rnn.eos_id

    def forward(self, encoder_hidden, encoder_outputs, function=F.log_softmax):
        batch_size = encoder_outputs.size(0)
        max_length = self.rnn.max_length
        self.pos_index = Variable(torch.LongTensor(range(batch_size)) * self.k).view(-1, 1)  # expect: DL202
        hidden = _inflate(encoder_hidden, self.k, 1)
        inflated_encoder_outputs = _inflate(encoder_outputs, self.k, 0)

        sequence_scores = torch.Tensor(batch_size * self.k, 1)  # expect: DL202
        sequence_scores.fill_(-float("Inf"))
        sequence_scores.index_fill_(0, torch.LongTensor([i * self.k for i in range(0, batch_size)]), 0.0)
        sequence_scores = Variable(sequence_scores)

        input_var = Variable(torch.transpose(torch.LongTensor([[self.SOS] * batch_size * self.k]), 0, 1))  # expect: DL202

        stored_hidden = []
        for _ in range(0, max_length):
            log_softmax_output, hidden, _ = self.rnn.forward_step(input_var, hidden, inflated_encoder_outputs, function=function)
            sequence_scores = _inflate(sequence_scores, self.V, 1)
            sequence_scores += log_softmax_output.squeeze(1)
            scores, candidates = sequence_scores.view(batch_size, -1).topk(self.k, dim=1)
            input_var = (candidates % self.V).view(batch_size * self.k, 1)
            sequence_scores = scores.view(batch_size * self.k, 1)
            predecessors = (candidates // self.V + self.pos_index.expand_as(candidates)).view(batch_size * self.k, 1)
            hidden = hidden.index_select(1, predecessors.squeeze())
            stored_hidden.append(hidden)

        return self._backtrack(stored_hidden, batch_size)

    def _backtrack(self, nw_hidden, b):
        h_n = torch.zeros(nw_hidden[0].size())  # expect: DL202
        last = nw_hidden[-1]
        h_n[:, :] = last
        return h_n.view(-1, b, self.k, last.size(-1))
