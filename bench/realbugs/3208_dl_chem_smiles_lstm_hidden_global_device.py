# source: https://github.com/rociomer/dl-chem-101/issues/10
# error: (issue text) "When a GPU is available but a saved model is loaded onto CPU, calling sample (or likelihood)
#        can raise device-mismatch errors because tensors created in the sampling functions are placed on the global
#        device (via get_device) while the model parameters live on another device."
# bug: 03_gen_SMILES_LSTM's SmilesLSTM pickles itself whole (save_state: torch.save(self, path)) and load_from_file
#      restores it with torch.load, so a model saved from a CPU run comes back with its network on the CPU. Sampling
#      feeds that network start tokens on the instance's stored self._device, but RNN.forward creates the initial
#      LSTM hidden state with _device = get_device() - "cuda" whenever the machine has a GPU - so on a GPU machine the
#      CPU network meets CUDA hidden states. The issue (open, no fix) says the fix belongs in RNN.forward: take the
#      device from the model's parameters or input_vector instead of get_device(); that line is marked (DL206, the
#      closest: a device from a global helper instead of the input's, used to create tensors in forward; the rnn call
#      that raises is two statements on). Reductions: Vocabulary/SMILESTokenizer are a character vocabulary; the
#      __main__ driver loads the model and calls the library's sample_smiles (the "sample" the issue names; the
#      walkthrough notebook samples with its own module-level sample() instead), after first writing the model file
#      (from a CPU-only run it is the reported CPU-saved model); a 1-layer LSTM of width 32; max_sequence_length 20.
#      torch.load is given weights_only=False (the whole-object pickle needs it since torch 2.6; upstream passes
#      nothing). Needs NumPy (upstream imports it; absent on this machine).
import os
from typing import List, Tuple, Union

import numpy as np
import torch


def get_device() -> str:
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
    return device


class Vocabulary:
    def __init__(self, tokens=("$", "^", "C", "N", "O", "(", ")", "=", "1")):
        self._tokens = {t: i for i, t in enumerate(tokens)}

    def __getitem__(self, token):
        return self._tokens[token]

    def __len__(self):
        return len(self._tokens)

    def decode(self, seq):
        inv = {i: t for t, i in self._tokens.items()}
        return [inv[int(i)] for i in seq]

    def encode(self, tokens):
        return [self._tokens[t] for t in tokens]


class SMILESTokenizer:
    def tokenize(self, smiles):
        return ["^"] + list(smiles) + ["$"]

    def untokenize(self, tokens):
        return "".join(t for t in tokens if t not in "^$")


class RNN(torch.nn.Module):
    def __init__(self, voc_size: int, layer_size: int = 32, num_layers: int = 1,
                 cell_type: str = 'lstm', embedding_layer_size: int = 16,
                 dropout: float = 0., layer_normalization: bool = False) -> None:
        super(RNN, self).__init__()
        self._layer_size = layer_size
        self._embedding_layer_size = embedding_layer_size
        self._num_layers = num_layers
        self._cell_type = cell_type.lower()
        self._dropout = dropout
        self._layer_normalization = layer_normalization
        self._embedding = torch.nn.Embedding(voc_size, self._embedding_layer_size)
        if self._cell_type == "gru":
            self._rnn = torch.nn.GRU(self._embedding_layer_size, self._layer_size,
                                     num_layers=self._num_layers, dropout=self._dropout, batch_first=True)
        elif self._cell_type == "lstm":
            self._rnn = torch.nn.LSTM(self._embedding_layer_size, self._layer_size,
                                      num_layers=self._num_layers, dropout=self._dropout, batch_first=True)
        else:
            raise ValueError("Value of the parameter cell_type should be 'gru' or 'lstm'")
        self._linear = torch.nn.Linear(self._layer_size, voc_size)

    def forward(self, input_vector: torch.Tensor,
                hidden_state: Union[None, torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        batch_size, seq_size = input_vector.size()

        _device = get_device()  # expect: DL206
        if hidden_state is None:
            size = (self._num_layers, batch_size, self._layer_size)
            if self._cell_type == "gru":
                hidden_state = torch.zeros(*size, device=_device)
            else:
                hidden_state = [torch.zeros(*size, device=_device),
                                torch.zeros(*size, device=_device)]

        embedded_data = self._embedding(input_vector)
        output_vector, hidden_state_out = self._rnn(embedded_data, hidden_state)
        if self._layer_normalization:
            output_vector = torch.nn.functional.layer_norm(output_vector, output_vector.size()[1:])
        output_vector = output_vector.reshape(-1, self._layer_size)
        output_data = self._linear(output_vector).view(batch_size, seq_size, -1)
        return output_data, hidden_state_out


class SmilesLSTM():
    def __init__(self, vocabulary: Vocabulary, tokenizer: SMILESTokenizer,
                 network_params: Union[dict, None] = None, max_sequence_length: int = 20) -> None:
        self.vocabulary = vocabulary
        self.tokenizer = tokenizer
        self.max_sequence_length = max_sequence_length
        self._device = get_device()
        if not isinstance(network_params, dict):
            network_params = {}
        self.network = RNN(len(self.vocabulary), **network_params)
        if self._device == "cuda":
            self.network.cuda()
        self._nll_loss = torch.nn.NLLLoss(reduction="none")

    @classmethod
    def load_from_file(cls, file_path: str, sampling_mode: bool = False):
        model = torch.load(file_path, weights_only=False)
        if sampling_mode:
            model.network.eval()
        return model

    def save_state(self, path: str):
        torch.save(self, path)

    def likelihood(self, sequences: torch.Tensor) -> torch.Tensor:
        if self._device == "cuda":
            sequences = sequences.to("cuda")
        logits, _ = self.network(sequences[:, :-1])
        log_probs = logits.log_softmax(dim=2)
        return self._nll_loss(log_probs.transpose(1, 2), sequences[:, 1:]).sum(dim=1)

    def sample_smiles(self, num: int = 128, batch_size: int = 128) -> Tuple[List, np.array]:
        batch_sizes = [batch_size for _ in range(num // batch_size)] + [num % batch_size]
        smiles_sampled = []
        likelihoods_sampled = []
        for size in batch_sizes:
            if not size:
                break
            seqs, likelihoods = self._sample(batch_size=size)
            smiles = [self.tokenizer.untokenize(self.vocabulary.decode(seq)) for seq in seqs.cpu().numpy()]
            smiles_sampled.extend(smiles)
            likelihoods_sampled.append(likelihoods.data.cpu().numpy())
            del seqs, likelihoods
        return smiles_sampled, np.concatenate(likelihoods_sampled)

    def _sample(self, batch_size: int = 128) -> Tuple[torch.Tensor, torch.Tensor]:
        start_token = torch.zeros(batch_size, dtype=torch.long, device=self._device)
        start_token[:] = self.vocabulary["^"]
        input_vector = start_token
        sequences = [self.vocabulary["^"] * torch.ones([batch_size, 1], dtype=torch.long, device=self._device)]
        hidden_state = None
        nlls = torch.zeros(batch_size, device=self._device)
        for _ in range(self.max_sequence_length - 1):
            logits, hidden_state = self.network(input_vector.unsqueeze(1), hidden_state)
            logits = logits.squeeze(1)
            probabilities = logits.softmax(dim=1)
            log_probs = logits.log_softmax(dim=1)
            input_vector = torch.multinomial(probabilities, 1).view(-1)
            sequences.append(input_vector.view(-1, 1))
            nlls += self._nll_loss(log_probs, input_vector)
            if input_vector.sum() == 0:
                break
        sequences = torch.cat(sequences, 1)
        return sequences.data, nlls


if __name__ == "__main__":
    path = "/tmp/model.49.pth"
    if not os.path.exists(path):
        SmilesLSTM(vocabulary=Vocabulary(), tokenizer=SMILESTokenizer()).save_state(path)
    trained_model = SmilesLSTM(vocabulary=Vocabulary(), tokenizer=SMILESTokenizer()).load_from_file(path, sampling_mode=True)
    print(f"There are {len(trained_model.vocabulary)} unique tokens")
    smiles, nlls = trained_model.sample_smiles(num=3, batch_size=3)
    print(smiles)
