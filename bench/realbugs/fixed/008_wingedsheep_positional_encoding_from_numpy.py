# source: https://github.com/wingedsheep/transformer/issues/4
# error: RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
# bug: the sinusoidal table is built with numpy and kept as a plain tensor attribute of the
#      module, so model.to(device) leaves it on the CPU and forward adds it to CUDA embeddings.
import numpy as np
import torch


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class PositionalEncoding(torch.nn.Module):
    def __init__(self, d_model, max_sequence_length):
        super().__init__()
        self.d_model = d_model
        self.max_sequence_length = max_sequence_length
        self.positional_encoding = self.create_positional_encoding()

    def create_positional_encoding(self):
        positional_encoding = np.zeros((self.max_sequence_length, self.d_model))
        for pos in range(self.max_sequence_length):
            for i in range(0, self.d_model, 2):
                positional_encoding[pos, i] = np.sin(pos / (10000 ** ((2 * i) / self.d_model)))
                if i + 1 < self.d_model:
                    positional_encoding[pos, i + 1] = np.cos(pos / (10000 ** ((2 * i) / self.d_model)))
        return torch.from_numpy(positional_encoding).float().to(get_device())

    def forward(self, x):
        return x + self.positional_encoding[:x.size(1), :]


class LanguageModel(torch.nn.Module):
    def __init__(self, number_of_tokens, max_sequence_length, d_model):
        super().__init__()
        self.token_embedding = torch.nn.Embedding(number_of_tokens, d_model)
        self.positional_encoding = PositionalEncoding(d_model, max_sequence_length)
        self.lm_head = torch.nn.Linear(d_model, number_of_tokens)

    def forward(self, x):
        return self.lm_head(self.positional_encoding(self.token_embedding(x)))


model = LanguageModel(1000, 64, 128).to(get_device())
logits = model(torch.randint(0, 1000, (2, 64)).to(get_device()))
