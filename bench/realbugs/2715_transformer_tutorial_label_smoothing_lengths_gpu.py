# source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Transformers/pull/5
# error: RuntimeError: 'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor
# bug: the training loop moves the sequences and their lengths to the device; the label-smoothed cross-entropy drops
#      the pad positions by packing predictions and targets with pack_padded_sequence, handing it those lengths,
#      which PyTorch requires on the host. The merged PR (commit af2d686) passes lengths.cpu() to both packs; the two
#      changed lines are marked (DL201, as in the corpus's other pack_padded_sequence lengths bugs).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=30, d_model=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.encoder = nn.GRU(d_model, d_model, batch_first=True)
        self.decoder = nn.GRU(d_model, d_model, batch_first=True)
        self.fc = nn.Linear(d_model, vocab)

    def forward(self, source_sequences, target_sequences, source_lengths, target_lengths):
        _, h = self.encoder(self.embed(source_sequences))
        out, _ = self.decoder(self.embed(target_sequences), h)
        return self.fc(out)


class LabelSmoothedCE(nn.Module):
    def __init__(self, eps=0.1):
        super().__init__()
        self.eps = eps

    def forward(self, inputs, targets, lengths):
        inputs, _, _, _ = pack_padded_sequence(input=inputs,
                                               lengths=lengths,  # expect: DL201
                                               batch_first=True,
                                               enforce_sorted=False)
        targets, _, _, _ = pack_padded_sequence(input=targets,
                                                lengths=lengths,  # expect: DL201
                                                batch_first=True,
                                                enforce_sorted=False)
        target_vector = torch.zeros_like(inputs).scatter(dim=1, index=targets.unsqueeze(1), value=1.).to(device)
        target_vector = target_vector * (1. - self.eps) + self.eps / target_vector.size(1)
        loss = (-1 * target_vector * F.log_softmax(inputs, dim=1)).sum(dim=1)
        return torch.mean(loss)


def train(loader, model, criterion, optimizer):
    model.train()
    for source_sequences, target_sequences, source_sequence_lengths, target_sequence_lengths in loader:
        source_sequences = source_sequences.to(device)
        target_sequences = target_sequences.to(device)
        source_sequence_lengths = source_sequence_lengths.to(device)
        target_sequence_lengths = target_sequence_lengths.to(device)
        predicted_sequences = model(source_sequences, target_sequences, source_sequence_lengths, target_sequence_lengths)
        loss = criterion(inputs=predicted_sequences,
                         targets=target_sequences[:, 1:],
                         lengths=target_sequence_lengths - 1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    model = TinySeq2Seq().to(device)
    criterion = LabelSmoothedCE(eps=0.1).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = []
    for _ in range(2):
        src = torch.randint(1, 30, (4, 7))
        tgt = torch.randint(1, 30, (4, 6))
        loader.append((src, tgt, torch.tensor([7, 5, 6, 3]), torch.tensor([6, 4, 5, 3])))
    print(train(loader, model, criterion, optimizer))
