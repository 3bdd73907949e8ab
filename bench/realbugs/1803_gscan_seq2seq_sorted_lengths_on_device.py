# source: https://github.com/LauraRuis/multimodal_seq2seq_gSCAN/pull/2
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the grounded-SCAN baseline picks a module-level device; its command encoder and its
#      attention decoder each turn the Python list of sequence lengths into a tensor ON that device
#      (torch.tensor(..., device=device)), sort it to get the permutation that reorders the GPU
#      embeddings, and hand the sorted lengths to pack_padded_sequence, which wants them on the
#      host. The merged PR moves the lengths handed to pack_padded_sequence to the CPU (its diff is
#      not in the stored text; the title and description say so), so both pack calls are marked
#      (no rule covers a GPU tensor passed where an op needs the host; DL201 is the closest).
from typing import List

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class EncoderRNN(nn.Module):
    def __init__(self, vocab, emb_dim, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb_dim, padding_idx=0)
        self.lstm = nn.LSTM(emb_dim, hidden)

    def forward(self, input_batch, input_lengths: List[int]):
        embedded = self.embedding(input_batch)
        lengths = torch.tensor(input_lengths, device=device, dtype=torch.long)
        lengths, perm_idx = torch.sort(lengths, descending=True)
        embedded = embedded.index_select(dim=0, index=perm_idx)
        packed = pack_padded_sequence(embedded, lengths, batch_first=True)  # expect: DL201
        packed_out, (hidden, _) = self.lstm(packed)
        out, _ = pad_packed_sequence(packed_out)
        _, unperm_idx = perm_idx.sort(0)
        return hidden[-1].index_select(0, unperm_idx), out.index_select(1, unperm_idx)


class AttentionDecoderRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden, padding_idx=0)
        self.lstm = nn.LSTM(hidden, hidden)
        self.out = nn.Linear(hidden * 2, vocab)

    def forward(self, target_batch, target_lengths: List[int], init_hidden, encoder_outputs):
        embedded = self.embedding(target_batch)
        lengths = torch.tensor(target_lengths, dtype=torch.long, device=device)
        lengths, perm_idx = torch.sort(lengths, descending=True)
        embedded = embedded.index_select(dim=0, index=perm_idx)
        h0 = init_hidden.index_select(0, perm_idx).unsqueeze(0)
        packed = pack_padded_sequence(embedded, lengths, batch_first=True)  # expect: DL201
        packed_out, _ = self.lstm(packed, (h0, torch.zeros_like(h0)))
        out, _ = pad_packed_sequence(packed_out)
        _, unperm_idx = perm_idx.sort(0)
        out = out.index_select(1, unperm_idx)
        context = encoder_outputs.mean(0, keepdim=True).expand(out.size(0), -1, -1)
        return self.out(torch.cat([out, context], dim=-1))


class Model(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.encoder = EncoderRNN(vocab, 8, hidden)
        self.decoder = AttentionDecoderRNN(vocab, hidden)

    def forward(self, commands, command_lengths, targets, target_lengths):
        hidden, enc_out = self.encoder(commands, command_lengths)
        return self.decoder(targets, target_lengths, hidden, enc_out)


if __name__ == "__main__":
    model = Model().to(device)
    commands = torch.randint(1, 12, (3, 7), device=device)
    targets = torch.randint(1, 12, (3, 5), device=device)
    print(model(commands, [7, 4, 6], targets, [5, 5, 3]).shape)
