# source: https://github.com/jerbarnes/sentiment_graphs/pull/9
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the graph parser's model interactor moves every batch field, the sequence lengths included,
#      to the configured device; the LSTM wrapper (a native LSTM, or a stack of one-layer LSTMs for
#      weight-drop regularisation) packs its input with those lengths in both paths. The fix (merged
#      PR 9) copies the lengths to the CPU in both pack calls; both are marked (no rule covers a GPU
#      tensor passed where an op needs the host; DL201 is the closest).
import torch
import torch.nn as nn


class EnhancedLSTM(nn.Module):
    def __init__(self, lstm_type, input_size, hidden_size, num_layers):
        super().__init__()
        self.lstm_type = lstm_type
        if lstm_type == "native":
            self.provider = nn.LSTM(input_size, hidden_size, num_layers=num_layers,
                                    bidirectional=True, batch_first=True)
        else:
            self.provider = StackedLSTM(input_size, hidden_size, num_layers)

    def forward(self, inputs, hidden, lengths):
        if self.lstm_type == "native":
            packed = nn.utils.rnn.pack_padded_sequence(inputs, lengths, batch_first=True)  # expect: DL201
            output, _ = self.provider(packed, hidden)
            output, _ = nn.utils.rnn.pad_packed_sequence(output, batch_first=True)
            return output
        return self.provider(inputs, lengths)


class StackedLSTM(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers):
        super().__init__()
        self.lstms = nn.ModuleList(
            nn.LSTM(input_size if i == 0 else 2 * hidden_size, hidden_size,
                    bidirectional=True, batch_first=True)
            for i in range(num_layers))

    def forward(self, x, lengths):
        output = x
        for lstm in self.lstms:
            packed = nn.utils.rnn.pack_padded_sequence(output, lengths, batch_first=True)  # expect: DL201
            output, _ = lstm(packed, None)
            output, _ = nn.utils.rnn.pad_packed_sequence(output, batch_first=True)
        return output


class BaseLSTM(nn.Module):
    def __init__(self, n_words, dim, hidden, lstm_type):
        super().__init__()
        self.word_embedding = nn.Embedding(n_words, dim)
        self.lstm = EnhancedLSTM(lstm_type, dim, hidden, num_layers=2)
        self.scorer = nn.Linear(2 * hidden, 3)

    def forward(self, seq_lengths, word_indices):
        features = self.word_embedding(word_indices)
        return self.scorer(self.lstm(features, None, seq_lengths))


class ModelInteractor:
    def __init__(self, model, device):
        self.model = model.to(device)
        self.device = device

    def run_batch(self, batch):
        seq_lengths, word_indices = (t.to(self.device) for t in batch)
        return self.model(seq_lengths, word_indices)


if __name__ == "__main__":
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    batch = (torch.tensor([6, 4, 3]), torch.randint(0, 30, (3, 6)))
    for lstm_type in ("native", "drop_connect"):
        interactor = ModelInteractor(BaseLSTM(30, 8, 16, lstm_type), device)
        print(interactor.run_batch(batch).shape)
