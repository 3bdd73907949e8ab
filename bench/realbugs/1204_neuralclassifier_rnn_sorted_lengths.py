# source: https://github.com/Tencent/NeuralNLP-NeuralClassifier/issues/115
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the classifier base class moves the token ids and the token lengths of each batch dict to
#      the configured device; the shared RNN layer sorts those lengths (on that device), reorders
#      the inputs by them and packs the sorted inputs with the sorted lengths, which
#      pack_padded_sequence wants on the host. The repository's later rnn.py passes
#      sorted_seq_lengths.cpu() in the pack call; that line is marked (no rule covers a GPU tensor
#      passed where an op needs the host; DL201 is the closest).
import torch
import torch.nn as nn


class Config:
    def __init__(self):
        self.device = "cuda:0" if torch.cuda.is_available() else "cpu"
        self.embedding_dim, self.hidden_dim, self.num_labels = 8, 16, 5


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, batch_first=True, bidirectional=True):
        super().__init__()
        self.batch_first = batch_first
        self.rnn = nn.GRU(input_size, hidden_size, batch_first=batch_first, bidirectional=bidirectional)

    def forward(self, inputs, seq_lengths=None, init_state=None):
        seq_lengths = seq_lengths.int()
        sorted_seq_lengths, indices = torch.sort(seq_lengths, descending=True)
        sorted_inputs = inputs[indices] if self.batch_first else inputs[:, indices]
        packed_inputs = nn.utils.rnn.pack_padded_sequence(sorted_inputs, sorted_seq_lengths, batch_first=self.batch_first)  # expect: DL201
        outputs, state = self.rnn(packed_inputs, init_state)
        _, revert_indices = torch.sort(indices, descending=False)
        last_hn = torch.cat((state[-2], state[-1]), 1)[revert_indices]
        pad_output, _ = nn.utils.rnn.pad_packed_sequence(outputs, batch_first=self.batch_first)
        return pad_output[revert_indices], last_hn


class Classifier(nn.Module):
    def __init__(self, config, vocab_size=40):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(vocab_size, config.embedding_dim, padding_idx=0)

    def get_embedding(self, batch):
        tokens = batch["doc_token"].to(self.config.device)
        embedding = self.token_embedding(tokens)
        length = batch["doc_token_len"].to(self.config.device)
        return embedding, length


class HMCN(Classifier):
    def __init__(self, config):
        super().__init__(config)
        self.rnn = RNN(config.embedding_dim, config.hidden_dim)
        self.linear = nn.Linear(2 * config.hidden_dim, config.num_labels)

    def forward(self, batch):
        embedding, length = self.get_embedding(batch)
        output, last_hidden = self.rnn(embedding, length)
        return self.linear(last_hidden)


if __name__ == "__main__":
    config = Config()
    model = HMCN(config).to(config.device)
    batch = {"doc_token": torch.randint(1, 40, (4, 7)), "doc_token_len": torch.tensor([7, 3, 5, 2])}
    logits = model(batch)
    print(logits.shape)
