# source: https://github.com/meta-pytorch/opacus/issues/311
# fixed twin: DPRNNBase.forward moves the stacked last hidden and cell states to the input's device before
#             apply_permutation (hs = torch.stack(hs, dim=0).to(device), the same for cs), as the fixed
#             opacus/layers/dp_rnn.py in the index does; forward_layer's device-less buffers are unchanged.
from typing import Optional

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence


def apply_permutation(tensor: Tensor, dim: int, permutation: Optional[Tensor]):
    if permutation is None:
        return tensor
    return tensor.index_select(dim, permutation)


def compute_seq_lengths(batch_sizes: Tensor):
    max_batch_size = batch_sizes[0]
    return [int(torch.sum(batch_sizes > i)) for i in range(max_batch_size)]


class DPRNNBase(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=1):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.has_cell_state = True
        self.cells = nn.ModuleList([nn.LSTMCell(input_size if layer == 0 else hidden_size, hidden_size)
                                    for layer in range(num_layers)])

    def forward(self, input, state_init=None):
        input_data, batch_sizes, sorted_indices, unsorted_indices = input
        dtype, device = input_data.dtype, input_data.device
        x = input_data.split(tuple(batch_sizes))
        seq_length = len(batch_sizes)
        max_batch_size = int(batch_sizes[0])

        h_0s = torch.zeros(self.num_layers, max_batch_size, self.hidden_size, dtype=dtype, device=device)
        c_0s = torch.zeros(self.num_layers, max_batch_size, self.hidden_size, dtype=dtype, device=device)
        hs, cs = [], []
        output = x
        for layer, cell in enumerate(self.cells):
            output, h, c = self.forward_layer(output, h_0s[layer], c_0s[layer], batch_sizes, cell, max_batch_size,
                                              seq_length)
            hs.append(h)
            cs.append(c)
        packed_data = torch.cat(output, dim=0)
        output = PackedSequence(packed_data, batch_sizes, sorted_indices, unsorted_indices)

        hs = torch.stack(hs, dim=0).to(device)
        hs = apply_permutation(hs, 1, unsorted_indices)
        cs = torch.stack(cs, dim=0).to(device)
        cs = apply_permutation(cs, 1, unsorted_indices)
        return output, (hs, cs)

    def forward_layer(self, x, h_0, c_0, batch_sizes, cell, max_batch_size, seq_length):
        h_n, c_n = [h_0], [c_0]
        for t in range(seq_length):
            batch_size_t = batch_sizes[t].item()
            h_next, c_next = cell(x[t], (h_n[t][:batch_size_t], c_n[t][:batch_size_t]))
            h_n.append(h_next)
            c_n.append(c_next)
        h_temp, c_temp = h_n[1:], c_n[1:]
        seq_lengths = compute_seq_lengths(batch_sizes)
        h_last = torch.zeros(max_batch_size, self.hidden_size)
        c_last = torch.zeros(max_batch_size, self.hidden_size)
        for i, seq_len in enumerate(seq_lengths):
            h_last[i, :] = h_temp[seq_len - 1][i, :]
            c_last[i, :] = c_temp[seq_len - 1][i, :]
        return h_temp, h_last, c_last


class DPLSTM(DPRNNBase):
    pass


class SampleNet(nn.Module):
    def __init__(self, vocab=30, emb=8, hidden=16, n_classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = DPLSTM(emb, hidden)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, (hs, _) = self.lstm(packed)
        return self.out(hs[-1])


if __name__ == "__main__":
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SampleNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        tokens = torch.randint(1, 30, (5, 7), device=device)
        lengths = torch.tensor([7, 3, 5, 2, 6])
        loss = nn.functional.cross_entropy(model(tokens, lengths), torch.randint(0, 3, (5,), device=device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
