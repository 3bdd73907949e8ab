# source: https://github.com/pytorch/tutorials/issues/1300
# fixed twin: the lengths go to the CPU, where pack_padded_sequence needs them, while the word indices go to the model's device (PR 1535).
import torch
import torch.nn as nn

SOS_token, EOS_token, MAX_LENGTH = 1, 2, 6


class Voc:
    def __init__(self):
        self.word2index = {"hello": 3, "there": 4, "how": 5, "are": 6, "you": 7}
        self.index2word = {v: k for k, v in self.word2index.items()}
        self.index2word.update({0: "PAD", SOS_token: "SOS", EOS_token: "EOS"})
        self.num_words = 8


def indexes_from_sentence(voc, sentence):
    return [voc.word2index[w] for w in sentence.split(" ")] + [EOS_token]


class EncoderRNN(nn.Module):
    def __init__(self, hidden_size, embedding):
        super().__init__()
        self.embedding = embedding
        self.gru = nn.GRU(hidden_size, hidden_size, bidirectional=True)
        self.hidden_size = hidden_size

    def forward(self, input_seq, input_lengths, hidden=None):
        embedded = self.embedding(input_seq)
        packed = nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)
        outputs, hidden = self.gru(packed, hidden)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
        outputs = outputs[:, :, : self.hidden_size] + outputs[:, :, self.hidden_size :]
        return outputs, hidden


class Decoder(nn.Module):
    def __init__(self, hidden_size, embedding, n_words):
        super().__init__()
        self.embedding = embedding
        self.gru = nn.GRU(hidden_size, hidden_size)
        self.out = nn.Linear(hidden_size, n_words)

    def forward(self, step_input, hidden, encoder_outputs):
        output, hidden = self.gru(self.embedding(step_input), hidden)
        return torch.softmax(self.out(output.squeeze(0)), dim=1), hidden


class GreedySearchDecoder(nn.Module):
    def __init__(self, encoder, decoder, device):
        super().__init__()
        self.encoder, self.decoder, self.device = encoder, decoder, device

    def forward(self, input_seq, input_length, max_length):
        encoder_outputs, encoder_hidden = self.encoder(input_seq, input_length)
        decoder_hidden = encoder_hidden[:1]
        decoder_input = torch.ones(1, 1, device=self.device, dtype=torch.long) * SOS_token
        all_tokens = torch.zeros([0], device=self.device, dtype=torch.long)
        for _ in range(max_length):
            probs, decoder_hidden = self.decoder(decoder_input, decoder_hidden, encoder_outputs)
            score, token = torch.max(probs, dim=1)
            all_tokens = torch.cat((all_tokens, token), dim=0)
            decoder_input = torch.unsqueeze(token, 0)
        return all_tokens


def evaluate(searcher, voc, sentence, device, max_length=MAX_LENGTH):
    indexes_batch = [indexes_from_sentence(voc, sentence)]
    lengths = torch.tensor([len(indexes) for indexes in indexes_batch])
    input_batch = torch.LongTensor(indexes_batch).transpose(0, 1)
    input_batch = input_batch.to(device)
    lengths = lengths.to("cpu")
    tokens = searcher(input_batch, lengths, max_length)
    return [voc.index2word[token.item()] for token in tokens]


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    voc, hidden_size = Voc(), 16
    embedding = nn.Embedding(voc.num_words, hidden_size)
    encoder = EncoderRNN(hidden_size, embedding).to(device)
    decoder = Decoder(hidden_size, embedding, voc.num_words).to(device)
    encoder.eval()
    decoder.eval()
    searcher = GreedySearchDecoder(encoder, decoder, device)
    with torch.no_grad():
        print(evaluate(searcher, voc, "hello how are you", device))
